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
     against four merged copies (four `adapter:` servers, one per task, as a router without
     sharing would run them: four times the merged server's RSS).
Prints the JSON document (--json OUT) and a Markdown table (--md OUT).

usage: /usr/bin/python3 bench/adapters_memory.py --cli BUILD/mcpclass [--precisions f32,int8]
                                                  [--keep DIR] [--json OUT] [--md OUT]
       --smoke: the fixtures' tiny sizes (checks the harness, not the figures)."""
import argparse
import json
import os
import pathlib
import shutil
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


def served_rss(cli, config_text, tmp, name, paths, text):
    """VmRSS (KiB) of `mcpclass serve` over `config_text` after one classification per path."""
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
        return server.rss()
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--precisions", default="f32,int8")
    ap.add_argument("--keep")
    ap.add_argument("--json")
    ap.add_argument("--md")
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
            rss = {
                "base": served_rss(args.cli, head, tmp, f"base-{precision}", ["/classify"], text),
                "one_merged": served_rss(args.cli, head + f"  adapter: {adapters[TASKS[0]]}\n",
                                         tmp, f"merged-{precision}", ["/classify"], text),
                "four_tasks": served_rss(args.cli, tasks, tmp, f"tasks-{precision}",
                                         [f"/classify/{t}" for t in TASKS], text),
            }
            limit = (weights + sum(adapter_bytes.values())) / 1024 + BUDGET_MIB * 1024
            result["precisions"][precision] = {
                "rss_kib": rss,
                "four_merged_copies_kib": 4 * rss["one_merged"],
                "limit_kib": round(limit),
                "within_limit": rss["four_tasks"] <= limit,
                "four_tasks_over_base_kib": rss["four_tasks"] - rss["base"],
            }
            log(f"{precision}: base {rss['base'] / 1024:.0f} MiB, one merged "
                f"{rss['one_merged'] / 1024:.0f} MiB, four tasks {rss['four_tasks'] / 1024:.0f} MiB "
                f"(limit {limit / 1024:.0f} MiB; four merged copies "
                f"{4 * rss['one_merged'] / 1024:.0f} MiB)")
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
             "adapters + 100 MiB) | four merged copies |",
             "|---|---:|---:|---:|---:|---:|"]
    for p, m in r["precisions"].items():
        rss = m["rss_kib"]
        lines.append(f"| {p} | {rss['base'] * mib:.0f} MiB | {rss['one_merged'] * mib:.0f} MiB | "
                     f"**{rss['four_tasks'] * mib:.0f} MiB** | {m['limit_kib'] * mib:.0f} MiB "
                     f"({'met' if m['within_limit'] else 'missed'}) | "
                     f"{m['four_merged_copies_kib'] * mib:.0f} MiB |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
