#!/usr/bin/env python3
"""Accuracy of mcpclass's precisions and of ONNX Runtime's int8 peer on a real trained model
(issue 46, "How it is checked"). On the held-out rows of the small BERT classifier that
bench/accuracy/train_bert_classifier.py trains (router queries, 8 router groups; cached):

  mcpclass f32 / int8 / bf16   `mcpclass serve` with `classifier: {kind: transformer, model: DIR,
                               precision: P}`, every row through POST /classify (128 texts per
                               request, docs/http-classify.md); a precision the configuration
                               reader, the build or the CPU refuses is a row "refused: <message>"
  ORT fp32 / ORT int8          onnxruntime-node on the same token ids (`mcpclass tokenize`, so the
                               rows compare forward passes, not tokenizers), one text per run
                               (bench/peers/transformer_classify_ids.mjs): model.onnx, and the
                               same export rewritten by bench/peers/quantize_onnx_int8.py as
                               ONNX Runtime's quantize_dynamic writes it

For each: accuracy, its difference from mcpclass f32 in points, argmax agreement with mcpclass
f32, and the largest |Δp| of any class probability against mcpclass f32 (and its 99th
percentile over rows). The goals of the issue are judged on the bf16 and int8 rows: accuracy
within 0.5 points, agreement ≥ 99%, |Δp| ≤ 0.02 (bf16) / 0.05 (int8). ORT fp32 must match
mcpclass f32 within 1e-3 (else the two sides do not run the same model and the run fails).
Without onnxruntime-node (bench/peers, `npm install`; optional) the ORT rows are skipped with a
message, as bench/onnx_peer.py does.

usage: bench/accuracy/precision_accuracy.py --cli BUILD/mcpclass [--model DIR] [--rows N]
           [--precisions f32,int8,bf16] [--threads 2] [--json OUT.json] [--md OUT.md]
       --smoke: the trainer's tiny model and 40 rows (checks the harness end to end in seconds;
       no figure judged)."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from lib import cpu, procs  # noqa: E402
from onnx_peer import config_json, emit, mcpclass_server, package_version  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, "bench", "peers")
BATCH = 128  # texts per POST /classify, the contract's limit
GOALS = {"bf16": 0.02, "int8": 0.05}  # max |Δp| per precision; accuracy ±0.5 points, agreement ≥ 99%
SAME_MODEL = 1e-3  # ORT fp32 against mcpclass f32


def log(*args):
    print("precision_accuracy:", *args, file=sys.stderr, flush=True)


def cache_dir():
    if os.environ.get("MCPCLASS_CACHE_DIR"):
        return os.environ["MCPCLASS_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpclass")


def train(model_dir, tiny):
    argv = ["/usr/bin/python3", os.path.join(HERE, "train_bert_classifier.py"), "--out", model_dir]
    subprocess.run(argv + (["--tiny"] if tiny else []), check=True, stdout=subprocess.DEVNULL)
    return json.load(open(os.path.join(model_dir, "training.json")))


def held_out(model_dir, n):
    """The trainer's held-out rows, or n of them spread evenly over the file."""
    with open(os.path.join(model_dir, "heldout.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    if n and n < len(rows):
        rows = rows[:: len(rows) // n][:n]
    return rows


def last_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def mcpclass_probabilities(args, model_dir, precision, labels, texts, tmp):
    """(probabilities in label order per text, None) or (None, the refusal's message)."""
    base = os.path.join(tmp, f"{precision}-base.json")
    with open(base, "w") as f:
        json.dump({"classifier": {"kind": "transformer", "model": model_dir, "precision": precision}}, f)
    try:
        config = config_json(args.cli, base, tmp, f"{precision}.json", threads=args.threads)
    except subprocess.CalledProcessError as e:  # the message without this run's scratch path
        return None, re.sub(r" \(in '[^']*'\)$", "", last_line(e.stderr))
    try:
        server = mcpclass_server(args.cli, config)
    except RuntimeError as e:
        return None, last_line(str(e))
    try:
        out = []
        for s in range(0, len(texts), BATCH):
            status, _, body = procs.http_request(server.port, "POST", "/classify",
                                                 {"inputs": texts[s:s + BATCH]}, timeout=300)
            if status != 200:
                raise SystemExit(f"precision_accuracy: {precision}: POST /classify: {status} {body[:300]}")
            for answer in json.loads(body):
                scores = {item["label"]: item["score"] for item in answer}
                if sorted(scores) != sorted(labels):
                    raise SystemExit(f"precision_accuracy: {precision}: labels {sorted(scores)} "
                                     f"are not the model's {labels}")
                out.append([scores[l] for l in labels])
        return out, None
    finally:
        server.stop()


def token_ids(cli, model_dir, max_tokens, texts, path):
    """mcpclass's own token ids of the texts (`mcpclass tokenize --batch`), one JSON array a line."""
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    out = subprocess.run([cli, "tokenize", "--tokenizer", os.path.join(model_dir, "tokenizer.json"),
                          "--batch", "--max-length", str(max_tokens)],
                         input=stdin, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line)["ids"] for line in out.splitlines() if line.strip()]
    if len(rows) != len(texts):
        raise SystemExit(f"precision_accuracy: tokenize gave {len(rows)} rows for {len(texts)} texts")
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def ort_unavailable():
    if not os.path.exists(os.path.join(PEERS, "node_modules", "onnxruntime-node", "package.json")):
        return "onnxruntime-node is not installed (cd bench/peers && npm install; it is optional)"
    return None


def int8_export(model_dir):
    """model-int8.onnx beside model.onnx, rewritten once per export; None and why when the
    rewrite cannot run."""
    src, dst = os.path.join(model_dir, "model.onnx"), os.path.join(model_dir, "model-int8.onnx")
    if os.path.exists(dst) and os.path.getmtime(dst) >= os.path.getmtime(src):
        return dst, None
    r = subprocess.run(["/usr/bin/python3", os.path.join(PEERS, "quantize_onnx_int8.py"), src, dst + ".tmp"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, last_line(r.stderr)
    os.replace(dst + ".tmp", dst)
    log(f"int8 rewrite: {r.stdout.strip()}")
    return dst, None


def ort_probabilities(onnx_path, ids_path, threads):
    out = subprocess.run(["node", os.path.join(PEERS, "transformer_classify_ids.mjs"), "--model", onnx_path,
                          "--ids", ids_path, "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def argmax(p):
    return max(range(len(p)), key=p.__getitem__)


def compare(probs, reference, truth):
    """Accuracy, and agreement and |Δp| against the reference (mcpclass f32) when there is one."""
    n = len(probs)
    row = {"accuracy": sum(argmax(p) == t for p, t in zip(probs, truth)) / n}
    if reference is not None:
        gaps = sorted(max(abs(a - b) for a, b in zip(p, r)) for p, r in zip(probs, reference))
        row.update(agreement=sum(argmax(p) == argmax(r) for p, r in zip(probs, reference)) / n,
                   max_abs_dp=gaps[-1], p99_abs_dp=gaps[min(n - 1, int(0.99 * n))])
    return row


def judge(row, f32_accuracy, limit, smoke):
    """The issue's goals on one row (None when it has no goal, or in a smoke run: a tiny model
    trained for seconds says nothing about them)."""
    if smoke or limit is None or "agreement" not in row:
        return None
    checks = {"accuracy_within_0.5_points": abs(row["accuracy"] - f32_accuracy) * 100 <= 0.5,
              "agreement_at_least_99%": row["agreement"] >= 0.99,
              f"abs_dp_at_most_{limit}": row["max_abs_dp"] <= limit}
    return {"met": all(checks.values()), "checks": checks}


def markdown(r):
    t, c = r["model"], r["cpu"]
    lines = ["# bf16 and int8 against f32 on a trained BERT classifier (issue 46)", "",
             "Written by bench/accuracy/precision_accuracy.py (rerun: `MCPCLASS_BENCH_ONLY=accuracy "
             "bench/run.sh`, or `bench/accuracy/precision_accuracy.py --cli BUILD/mcpclass --json OUT.json "
             "--md OUT.md`). mcpclass rows: `mcpclass serve` with `precision: P`, every row through "
             "POST /classify; ONNX Runtime rows: onnxruntime-node on mcpclass's token ids, batch 1, the "
             "fp32 export and its rewrite as quantize_dynamic writes it (bench/peers/quantize_onnx_int8.py: "
             "DynamicQuantizeLinear + MatMulInteger, per-column int8 weights; embeddings, attention "
             "products, pooler and classifier in float32). |Δp|: the largest difference of any class "
             "probability from mcpclass f32 over the rows (in brackets its 99th percentile over rows).", "",
             f"Run {r['date']} on {c['model']} ({c['cores']} cores; {c['summary']}).", "",
             f"Model: BertForSequenceClassification trained from scratch by "
             f"bench/accuracy/train_bert_classifier.py (hidden {t['size']['hidden']}, {t['size']['layers']} layers, "
             f"{t['size']['heads']} heads, intermediate {t['size']['intermediate']}, vocabulary {t['vocabulary']}, "
             f"{t['parameters']:,} parameters, max {t['size']['max_tokens']} tokens) on {t['train_rows']:,} router "
             f"queries, 8 router groups, {t['train_seconds']:.0f} s on {t['threads']} thread(s) with torch "
             f"{t['torch']}; PyTorch's own held-out accuracy {100 * t['heldout_accuracy_pytorch']:.2f}% "
             f"(all {t['heldout_rows']:,} rows). Rows here: {r['rows']:,} held out.", "",
             "| engine | precision | accuracy | Δ vs mcpclass f32 (points) | argmax agreement with mcpclass f32 "
             "| max \\|Δp\\| (p99) | goal |",
             "|---|---|---:|---:|---:|---:|---|"]
    f32 = r["rows_by_name"].get("mcpclass f32", {}).get("accuracy")
    for name, row in r["rows_by_name"].items():
        engine, precision = name.split(" ", 1)
        if "refused" in row or "skipped" in row:
            why = "refused: " + row["refused"] if "refused" in row else "skipped: " + row["skipped"]
            lines.append(f"| {engine} | {precision} | {why.replace('|', '/')} | | | | |")
            continue
        delta = f"{100 * (row['accuracy'] - f32):+.2f}" if f32 is not None else ""
        agree = f"{100 * row['agreement']:.2f}%" if "agreement" in row else ""
        gap = f"{row['max_abs_dp']:.2g} ({row['p99_abs_dp']:.2g})" if "max_abs_dp" in row else ""
        goal = "" if row.get("goal") is None else ("met" if row["goal"]["met"] else "missed: " + ", ".join(
            k for k, v in row["goal"]["checks"].items() if not v))
        lines.append(f"| {engine} | {precision} | {100 * row['accuracy']:.2f}% | {delta} | {agree} | {gap} | {goal} |")
    lines += ["", "Goals (issue 46): bf16 and int8 accuracy within 0.5 points of f32, argmax agreement ≥ 99%, "
              "probabilities within 0.02 (bf16) / 0.05 (int8) of f32." + (" Smoke run: no figure judged."
                                                                         if r["smoke"] else ""), ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="mcpclass built with the learned component")
    ap.add_argument("--model", help="the trained checkpoint directory (default: trained into the cache)")
    ap.add_argument("--rows", type=int, default=0, help="held-out rows to use (0: all)")
    ap.add_argument("--precisions", default="f32,int8,bf16")
    ap.add_argument("--threads", type=int, default=2, help="classifier.threads and ORT's intra-op threads")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    if args.smoke:
        args.rows = args.rows or 40
    model_dir = args.model or os.path.join(cache_dir(), "accuracy", "bert-router8" + ("-tiny" if args.smoke else ""))
    started = time.monotonic()
    training = train(model_dir, args.smoke)
    labels = training["labels"]
    rows = held_out(model_dir, args.rows)
    texts, truth = [r["text"] for r in rows], [labels.index(r["label"]) for r in rows]
    log(f"model {model_dir}: {training['parameters']:,} parameters; {len(rows)} held-out rows")

    results, reference = {}, None
    with tempfile.TemporaryDirectory(prefix="precision-accuracy.") as tmp:
        precisions = args.precisions.split(",")
        if "f32" in precisions:  # the reference of every other row goes first
            precisions = ["f32"] + [p for p in precisions if p != "f32"]
        for precision in precisions:
            probs, refused = mcpclass_probabilities(args, model_dir, precision, labels, texts, tmp)
            name = f"mcpclass {precision}"
            if refused and precision == "f32":  # every build with kind transformer runs f32
                raise SystemExit(f"precision_accuracy: mcpclass refused f32, the reference: {refused}")
            if refused:
                results[name] = {"refused": refused}
                log(f"{name}: refused: {refused}")
                continue
            if precision == "f32":
                reference = probs
            results[name] = compare(probs, reference if precision != "f32" else None, truth)
            results[name]["goal"] = judge(results[name], results.get("mcpclass f32", {}).get("accuracy"),
                                          GOALS.get(precision), args.smoke) if reference and precision != "f32" else None
            log(f"{name}: {json.dumps(results[name])}")

        missing = ort_unavailable()
        ids_path = os.path.join(tmp, "ids.jsonl")
        if not missing:
            token_ids(args.cli, model_dir, training["size"]["max_tokens"], texts, ids_path)
        for name, precision in (("ORT fp32", None), ("ORT int8", "int8")):
            if missing:
                results[name] = {"skipped": missing}
                log(f"{name}: skipped: {missing}")
                continue
            path, why = (os.path.join(model_dir, "model.onnx"), None) if precision is None else int8_export(model_dir)
            if why:
                results[name] = {"skipped": f"the int8 rewrite failed: {why}"}
                log(f"{name}: skipped: {why}")
                continue
            results[name] = compare(ort_probabilities(path, ids_path, args.threads), reference, truth)
            results[name]["goal"] = judge(results[name], results["mcpclass f32"]["accuracy"],
                                          GOALS.get(precision), args.smoke) if reference and precision else None
            log(f"{name}: {json.dumps(results[name])}")
        fp32 = results.get("ORT fp32", {})
        if fp32.get("max_abs_dp", 0.0) > SAME_MODEL:
            raise SystemExit(f"precision_accuracy: ORT fp32 differs from mcpclass f32 by {fp32['max_abs_dp']:.3g} "
                             f"> {SAME_MODEL}: the two sides do not run the same model")

    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "smoke": args.smoke, "cpu": cpu.describe(),
              "model": training, "model_dir": model_dir, "rows": len(rows), "threads": args.threads,
              "versions": {"onnxruntime_node": None if missing else package_version("onnxruntime-node")},
              "rows_by_name": results, "seconds": round(time.monotonic() - started, 1)}
    table = markdown(result)
    log("\n" + table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table)
    emit(result, args.json)


if __name__ == "__main__":
    main()
