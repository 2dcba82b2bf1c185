#!/usr/bin/python3
"""Memory of one base shared by several LoRA adapters (issue 48, "Adapters": RSS with four
adapters ≤ one base + the adapters + 100 MB), measured at the real size of BERT-base.

In one run:
  1. a BertForSequenceClassification checkpoint of BERT-base's sizes with random weights
     (bench/peers/make_transformer_checkpoints.py's, no ONNX export) and four PEFT LoRA adapters
     over it as routers train them (r 16, lora_alpha 32, target_modules query, key, value and
     every dense layer — attention output, feed-forward, pooler —, modules_to_save classifier);
  2. at each --precisions, `mcpclass serve` of: the base alone; the base with one adapter merged
     (`adapter:`, what one task costs without sharing); the base with the four (`adapters:`),
     each task classified once through POST /classify/<task> so that its activations exist;
  3. each server's VmRSS after that, against the checkpoint's and the adapters' file sizes, and
     against four merged copies (the same four with `merge_adapters: true`: a merged base a task);
  4. what applying the updates unmerged costs: the p50 of --repeat one-at-a-time POSTs of a
     32-token text to a shared task's /classify/<task> against a merged one's (and the base's)
     (HTTP on loopback included; classifier.threads as configured by default).
Prints the JSON document (--json OUT) and a Markdown table (--md OUT).

usage: /usr/bin/python3 bench/adapters_memory.py --cli BUILD/mcpclass [--precisions f32,int8]
                                                  [--repeat 30] [--keep DIR] [--json OUT] [--md OUT]
       --smoke: the fixtures' tiny sizes (checks the harness, not the figures)."""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "peers"))
from lib import cpu, procs  # noqa: E402
import make_transformer_checkpoints as checkpoints  # noqa: E402

TASKS = ["intent", "jailbreak", "pii", "fact_check"]
RANK, ALPHA = 16, 32
BUDGET_MIB = 100


def log(*args):
    print("adapters:", *args, file=sys.stderr, flush=True)


def make_adapter(directory, model, seed, labels):
    """A PEFT LoRA adapter of `model` as save_pretrained writes it: lora_A/lora_B of every
    targeted nn.Linear (random, as a trained one would be dense) and the classifier saved whole."""
    f = checkpoints.bert_fixtures
    g = torch.Generator().manual_seed(seed)
    saved = {}
    # The published names (bert.encoder.layer.N.attention.self.query.weight, ...).
    for name, tensor in model.tensors().items():
        module = name[:-len(".weight")]
        if not name.endswith(".weight") or tensor.dim() != 2 or \
                module.rsplit(".", 1)[-1] not in ("query", "key", "value", "dense"):
            continue
        out, inputs = tensor.shape
        saved[f"base_model.model.{module}.lora_A.weight"] = 0.02 * torch.randn(
            RANK, inputs, generator=g)
        saved[f"base_model.model.{module}.lora_B.weight"] = 0.02 * torch.randn(
            out, RANK, generator=g)
    hidden = model.head.in_features
    saved["base_model.model.classifier.weight"] = 0.02 * torch.randn(labels, hidden, generator=g)
    saved["base_model.model.classifier.bias"] = torch.zeros(labels)
    directory.mkdir(parents=True, exist_ok=True)
    config = {"peft_type": "LORA", "task_type": "SEQ_CLS", "r": RANK, "lora_alpha": ALPHA,
              "lora_dropout": 0.1, "target_modules": ["query", "key", "value", "dense"],
              "modules_to_save": ["classifier"], "bias": "none", "use_rslora": False,
              "use_dora": False, "fan_in_fan_out": False, "inference_mode": True,
              "base_model_name_or_path": "bert-base-uncased"}
    (directory / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n")
    f.save_safetensors(directory / "adapter_model.safetensors", saved, "F32")
    return (directory / "adapter_model.safetensors").stat().st_size


def served(cli, config_text, tmp, name, paths, text, repeat):
    """VmRSS (KiB) of `mcpclass serve` over `config_text` after one classification per path, and
    the p50 (ms) of `repeat` one-at-a-time POSTs of `text` to the last path."""
    config = tmp / f"{name}.yaml"
    config.write_text(config_text)
    server = procs.Server([cli, "serve", "--http", "127.0.0.1:0", "--config", str(config)],
                          ready=r"on http://127\.0\.0\.1:(\d+)/mcp", timeout=600)
    try:
        for path in paths:
            status, _, body = procs.http_request(server.port, "POST", path, {"inputs": text})
            if status != 200:
                raise RuntimeError(f"{name} {path}: {status} {body}")
        time.sleep(0.5)
        rss = server.rss()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            procs.http_request(server.port, "POST", paths[-1], {"inputs": text})
            times.append((time.perf_counter() - start) * 1000)
        return rss, statistics.median(times) if times else 0.0
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--precisions", default="f32,int8")
    ap.add_argument("--keep")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--repeat", type=int, default=30,
                    help="one-at-a-time requests timed per server (p50)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    tmp = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="mcpclass-adapters-"))
    tmp.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    try:
        sizes = checkpoints.TINY if args.smoke else checkpoints.SIZES
        base_dir, _, model, _ = checkpoints.make_bert(tmp, sizes["bert"])
        weights = (base_dir / "model.safetensors").stat().st_size
        adapters = {t: tmp / f"adapter-{t}" for t in TASKS}
        adapter_bytes = {t: make_adapter(d, model, 100 + i, 3) for i, (t, d) in
                         enumerate(adapters.items())}
        log(f"base {weights / 2**20:.0f} MiB, adapters "
            f"{sum(adapter_bytes.values()) / 2**20:.1f} MiB in all")
        text = checkpoints.text_of(32)
        result = {"cpu": cpu.describe(), "base_weights_bytes": weights,
                  "adapter_bytes": adapter_bytes, "rank": RANK, "smoke": args.smoke,
                  "budget_mib": BUDGET_MIB, "precisions": {}}
        for precision in args.precisions.split(","):
            head = (f"classifier:\n  kind: transformer\n  model: {base_dir}\n"
                    f"  precision: {precision}\n")
            tasks = head + "  adapters:\n" + "".join(f"    {t}: {d}\n" for t, d in adapters.items())
            # The last task's path is timed: its updates are added to the shared products, where
            # the merged server's adapter is in the weights.
            runs = {
                "base": served(args.cli, head, tmp, f"base-{precision}", ["/classify"], text,
                               args.repeat),
                "one_merged": served(args.cli, head + f"  adapter: {adapters[TASKS[-1]]}\n",
                                     tmp, f"merged-{precision}", ["/classify"], text, args.repeat),
                "four_tasks": served(args.cli, tasks, tmp, f"tasks-{precision}",
                                     [f"/classify/{t}" for t in TASKS], text, args.repeat),
                "four_merged": served(args.cli, tasks + "  merge_adapters: true\n", tmp,
                                      f"tasks-merged-{precision}",
                                      [f"/classify/{t}" for t in TASKS], text, args.repeat),
            }
            rss = {k: v[0] for k, v in runs.items()}
            p50 = {k: round(v[1], 2) for k, v in runs.items()}
            limit = (weights + sum(adapter_bytes.values())) / 1024 + BUDGET_MIB * 1024
            result["precisions"][precision] = {
                "rss_kib": rss,
                "four_merged_copies_kib": rss["four_merged"],
                "limit_kib": round(limit),
                "within_limit": rss["four_tasks"] <= limit,
                "four_tasks_over_base_kib": rss["four_tasks"] - rss["base"],
                "p50_ms_32_tokens": p50,
            }
            log(f"{precision}: base {rss['base'] / 1024:.0f} MiB, one merged "
                f"{rss['one_merged'] / 1024:.0f} MiB, four tasks {rss['four_tasks'] / 1024:.0f} MiB "
                f"(limit {limit / 1024:.0f} MiB; four merged copies "
                f"{rss['four_merged'] / 1024:.0f} MiB); p50 at 32 tokens: base "
                f"{p50['base']} ms, merged {p50['one_merged']} ms, a shared task "
                f"{p50['four_tasks']} ms, a merged task {p50['four_merged']} ms")
        text_out = json.dumps(result, indent=2) + "\n"
        if args.json:
            pathlib.Path(args.json).write_text(text_out)
        else:
            sys.stdout.write(text_out)
        if args.md:
            pathlib.Path(args.md).write_text(markdown(result))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def markdown(r):
    mib = 1 / 1024
    lines = [f"CPU: {r['cpu']['model']} ({r['cpu']['cores']} cores; {r['cpu']['summary']})", "",
             f"BERT-base sized checkpoint, {r['base_weights_bytes'] / 2**20:.0f} MiB of float32 "
             f"weights; four LoRA adapters (r {r['rank']}, query/key/value/dense, classifier "
             f"saved whole), {sum(r['adapter_bytes'].values()) / 2**20:.1f} MiB in all.", "",
             "| precision | base alone | one adapter merged | four adapters shared | limit (base + "
             "adapters + 100 MiB) | four merged copies (merge_adapters) | p50 base / one merged / "
             "shared task / merged task |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for p, m in r["precisions"].items():
        rss, t = m["rss_kib"], m["p50_ms_32_tokens"]
        lines.append(f"| {p} | {rss['base'] * mib:.0f} MiB | {rss['one_merged'] * mib:.0f} MiB | "
                     f"**{rss['four_tasks'] * mib:.0f} MiB** | {m['limit_kib'] * mib:.0f} MiB "
                     f"({'met' if m['within_limit'] else 'missed'}) | "
                     f"{m['four_merged_copies_kib'] * mib:.0f} MiB | "
                     f"{t['base']} / {t['one_merged']} / {t['four_tasks']} / {t['four_merged']} ms |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
