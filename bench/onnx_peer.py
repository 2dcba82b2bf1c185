#!/usr/bin/env python3
"""The learned default against what a user would pick instead (issue 16, item 4): the same model
(USE-lite + the trained 14-category head of models/mmlu14.yaml) exported to ONNX
(bench/peers/export_onnx.py) and served by the official TypeScript MCP SDK with onnxruntime-node
(bench/peers/server.mjs --onnx). In one run:
  1. check:      the peer's probabilities against mcpclass's at float32 (precision: f32) on the
                 texts of models/use-lite/reference.json (tokenised alike): max |Δp| ≤ 1e-3;
  2. agreement:  classes of --agreement held-out MMLU-Pro questions (FNV-1a(id) mod 100 < 20,
                 never trained on) from mcpclass as served (precision auto) and the peer, over
                 HTTP: fails below --min-agreement (0.97);
  3. HTTP:       `tools/call classify_text` over POST /mcp (JSON answers, one MCP session each,
                 the same request bytes), wrk at --conns (1,32), --rounds alternating, medians;
                 ratios mcpclass ÷ peer taken within each round;
  4. forward:    the encoder's forward pass alone, batch 1, on the same token ids: ONNX Runtime's
                 session.run in Node (bench/peers/encoder_forward.mjs) vs the native encoder
                 (bench/learned/bench_encoder_forward.cpp) at the served precision and at f32.
Both servers and both forward passes use --threads intra-op threads (classifier.threads of
mcpclass, intraOpNumThreads of ONNX Runtime).

usage: bench/onnx_peer.py --cli BUILD/mcpclass --forward-binary BUILD/bench/learned/bench_encoder_forward
                          [--threads 1] [--seconds 3] [--rounds 3] [--conns 1,32] [--json OUT]
       --smoke: 1 round of 1 s, 40 agreement texts (checks the harness, not the figures);
       --check-only: steps 1 and 2 only (exit status 1 when either fails)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import procs, wrk  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")
TEXT = "What is the integral of x^2 from 0 to 3?"  # bench/suite.py's HTTP text
QUESTIONS = os.path.join(ROOT, "models", "data", "mmlu_pro_questions.jsonl")


def log(*args):
    print("onnx:", *args, file=sys.stderr, flush=True)


def fnv1a(text):
    h = 14695981039346656037
    for b in text.encode():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def held_out(n):
    """n held-out questions (the library's split: FNV-1a of the id, 20%), spread over the file."""
    rows = []
    with open(QUESTIONS) as f:
        for line in f:
            r = json.loads(line)
            rid = r["id"] if isinstance(r["id"], str) else json.dumps(r["id"])
            if fnv1a(rid) % 100 < 20:
                rows.append(r)
    step = max(1, len(rows) // n)
    return rows[::step][:n]


def package_version(name):
    with open(os.path.join(PEERS, "node_modules", name, "package.json")) as f:
        return json.load(f)["version"]


def median_of(runs, key="rps"):
    ordered = sorted(runs, key=lambda r: r[key])
    return ordered[len(ordered) // 2]


def spread(values):
    values = sorted(values)
    return {"median": values[len(values) // 2], "min": values[0], "max": values[-1]}


def emit(result, path):
    """The run's JSON into `path`, or onto stdout without one."""
    text = json.dumps(result, indent=2) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def config_json(cli, base, tmp, name, **classifier):
    doc = json.loads(subprocess.run([cli, "config", "-c", base], check=True, capture_output=True,
                                    text=True).stdout)
    doc["classifier"].update(classifier)
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def mcpclass_server(cli, config):
    return procs.Server([cli, "serve", "--http", "127.0.0.1:0", "--config", config],
                        ready=r"on http://127\.0\.0\.1:(\d+)/mcp")


def peer_server(config, export, threads):
    return procs.Server(["node", os.path.join(PEERS, "server.mjs"), "--config", config, "--onnx",
                         export, "--threads", str(threads), "--http", "127.0.0.1:0"],
                        ready=r"listening on http://127\.0\.0\.1:(\d+)")


def check_probabilities(cli, f32_config, peer, peer_sid, served, served_sid):
    """max |Δp| of the peer against mcpclass at f32 (the same arithmetic) and as served."""
    texts = [x["text"] for x in json.load(open(os.path.join(ROOT, "models/use-lite/reference.json")))["items"]]
    f32 = mcpclass_server(cli, f32_config)
    try:
        f32_sid = procs.open_session(f32.port)
        worst_f32 = worst_served = 0.0
        for i, t in enumerate(texts):
            a, _, _ = procs.classify_over_http(f32.port, f32_sid, t, with_probabilities=True, rid=i + 1)
            b, _, _ = procs.classify_over_http(peer.port, peer_sid, t, with_probabilities=True, rid=i + 1)
            c, _, _ = procs.classify_over_http(served.port, served_sid, t, with_probabilities=True,
                                               rid=i + 1)
            worst_f32 = max(worst_f32, max(abs(x - y) for x, y in zip(a["probabilities"], b["probabilities"])))
            worst_served = max(worst_served,
                               max(abs(x - y) for x, y in zip(c["probabilities"], b["probabilities"])))
    finally:
        f32.stop()
    return {"texts": len(texts), "max_abs_diff_vs_f32": worst_f32,
            "max_abs_diff_vs_served": worst_served}


def agreement(rows, mc, mc_sid, peer, peer_sid):
    same, differ, correct_mc, correct_peer = 0, [], 0, 0
    for i, r in enumerate(rows):
        a, _, _ = procs.classify_over_http(mc.port, mc_sid, r["text"], rid=1000 + i)
        b, _, _ = procs.classify_over_http(peer.port, peer_sid, r["text"], rid=1000 + i)
        if a["class"] == b["class"]:
            same += 1
        else:
            differ.append({"id": r["id"], "mcpclass": a["class"], "peer": b["class"],
                           "confidence": [a["confidence"], b["confidence"]]})
        correct_mc += a["class"] == r["label"]
        correct_peer += b["class"] == r["label"]
    return {"texts": len(rows), "same_class": same, "share": same / len(rows),
            "accuracy_mcpclass": correct_mc / len(rows), "accuracy_peer": correct_peer / len(rows),
            "differing": differ}


def forward(args, export, texts, tmp):
    """Rounds alternating ONNX Runtime (Node) and the native encoder on the same ids."""
    texts_path = os.path.join(tmp, "forward-texts.json")
    ids_path = os.path.join(tmp, "forward-ids.jsonl")
    with open(texts_path, "w") as f:
        json.dump(texts, f)
    cache = os.path.dirname(os.path.dirname(export))
    encoder = os.path.join(cache, "use-lite", "use-lite.safetensors")
    tokenizer = os.path.join(cache, "use-lite", "tokenizer.model")
    runs = {"ort": [], "native": [], "native_f32": []}
    for round_ in range(args.rounds):
        out = subprocess.run(["node", os.path.join(PEERS, "encoder_forward.mjs"), "--model",
                              os.path.join(export, "encoder.onnx"), "--texts", texts_path,
                              "--threads", str(args.threads), "--repeat", str(args.forward_repeat),
                              "--ids-out", ids_path], check=True, capture_output=True, text=True)
        runs["ort"].append(json.loads(out.stdout))
        for key, precision in (("native", "auto"), ("native_f32", "f32")):
            out = subprocess.run([args.forward_binary, encoder, tokenizer, ids_path,
                                  str(args.threads), str(args.forward_repeat), precision],
                                 check=True, capture_output=True, text=True)
            runs[key].append(json.loads(out.stdout.strip().splitlines()[-1]))
        log(f"forward round {round_ + 1}: ORT p50 {runs['ort'][-1]['p50_us']:.0f} µs, native "
            f"p50 {runs['native'][-1]['p50_us']:.0f} µs (f32 {runs['native_f32'][-1]['p50_us']:.0f})")
    per_round = lambda k, field: spread([n[field] / o[field] for n, o in zip(runs[k], runs["ort"])])
    return {"threads": args.threads, "texts": len(texts), "repeat": args.forward_repeat,
            "mean_tokens": runs["ort"][0]["mean_tokens"], "rounds": runs,
            "median": {k: median_of(v, "mean_us") for k, v in runs.items()},
            "native_vs_ort_mean": per_round("native", "mean_us"),
            "native_vs_ort_p50": per_round("native", "p50_us"),
            "native_f32_vs_ort_mean": per_round("native_f32", "mean_us"),
            "native_f32_vs_ort_p50": per_round("native_f32", "p50_us")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="mcpclass built with the learned component")
    ap.add_argument("--forward-binary", help="bench_encoder_forward (without it: no forward figures)")
    ap.add_argument("--config", default=os.path.join(ROOT, "models", "mmlu14.yaml"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--conns", default="1,32")
    ap.add_argument("--agreement", type=int, default=200)
    ap.add_argument("--min-agreement", type=float, default=0.97)
    ap.add_argument("--forward-texts", type=int, default=100)
    ap.add_argument("--forward-repeat", type=int, default=2)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--check-only", action="store_true", help="the probabilities and agreement only")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.smoke:
        args.seconds, args.rounds, args.agreement, args.forward_texts = 1, 1, 40, 10
    conns = [int(c) for c in args.conns.split(",")]
    seconds = max(1, int(round(args.seconds)))
    started = time.monotonic()

    export = subprocess.run(["/usr/bin/python3", os.path.join(PEERS, "export_onnx.py")], check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    meta = json.load(open(os.path.join(export, "model.json")))
    log(f"ONNX export {export}")
    tmp = tempfile.mkdtemp(prefix="onnx-bench.")
    served_config = config_json(args.cli, args.config, tmp, "served.json", threads=args.threads)
    f32_config = config_json(args.cli, args.config, tmp, "f32.json", threads=args.threads,
                             precision="f32")
    names = [c["name"] for c in json.load(open(served_config))["categories"]]
    rows = held_out(max(args.agreement, args.forward_texts))
    for r in rows:
        r["label"] = names.index(r["category"])

    mc = peer = None
    try:
        mc = mcpclass_server(args.cli, served_config)
        peer = peer_server(served_config, export, args.threads)
        mc_sid, peer_sid = procs.open_session(mc.port), procs.open_session(peer.port)
        check = check_probabilities(args.cli, f32_config, peer, peer_sid, mc, mc_sid)
        log(f"probabilities: max |Δp| {check['max_abs_diff_vs_f32']:.2g} vs mcpclass f32, "
            f"{check['max_abs_diff_vs_served']:.2g} vs mcpclass as served")
        if check["max_abs_diff_vs_f32"] > 1e-3:
            raise SystemExit(f"onnx: the ONNX peer's probabilities differ from mcpclass's (f32) by "
                             f"{check['max_abs_diff_vs_f32']:.3g} > 1e-3")
        agreed = agreement(rows[:args.agreement], mc, mc_sid, peer, peer_sid)
        log(f"agreement: {agreed['same_class']}/{agreed['texts']} same class "
            f"({100 * agreed['share']:.1f}%); accuracy mcpclass {100 * agreed['accuracy_mcpclass']:.1f}%, "
            f"peer {100 * agreed['accuracy_peer']:.1f}%")
        if agreed["share"] < args.min_agreement:
            raise SystemExit(f"onnx: mcpclass and the ONNX peer agree on {agreed['same_class']} of "
                             f"{agreed['texts']} classes, below {args.min_agreement:.0%}: "
                             f"{agreed['differing'][:5]}")

        if args.check_only:
            return

        body = json.dumps(procs.tools_call(0, TEXT), separators=(",", ":")).replace('"id":0', '"id":@ID@', 1)
        ver = {"MCP-Protocol-Version": procs.PROTOCOL_VERSION, "Accept": procs.MCP_ACCEPT}
        targets = {"mcpclass": (mc, {**ver, "Mcp-Session-Id": mc_sid}),
                   "onnx_peer": (peer, {**ver, "Mcp-Session-Id": peer_sid})}
        idle = {k: s.rss() for k, (s, _) in targets.items()}
        peak = dict(idle)
        for s, h in targets.values():  # warm-up
            wrk.run(f"http://127.0.0.1:{s.port}/mcp", wrk.lua_script(h, body, "@ID@", '"class"'), 1, 1)
        all_runs = {}
        for round_ in range(args.rounds):
            for c in conns:
                for key, (server, headers) in targets.items():
                    sampler = procs.RssSampler(server.pid)
                    r = wrk.run(f"http://127.0.0.1:{server.port}/mcp",
                                wrk.lua_script(headers, body, "@ID@", '"class"'), c, seconds)
                    peak[key] = max(peak[key], sampler.stop().peak)
                    r.update(key=key, round=round_ + 1)
                    all_runs.setdefault((key, c), []).append(r)
                    log(f"http round {round_ + 1} {key} c={c}: {r['rps']:.0f} req/s p50 "
                        f"{r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms errors "
                        f"{r['non_2xx'] + r['socket_errors'] + r['bad_answers']}")
                    time.sleep(0.2)
        http = []
        for c in conns:
            row = {"connections": c}
            for key in targets:
                m = dict(median_of(all_runs[(key, c)]))
                m["rps_of_rounds"] = [round(r["rps"]) for r in all_runs[(key, c)]]
                m["errors_all_rounds"] = sum(r["non_2xx"] + r["socket_errors"] + r["bad_answers"]
                                             for r in all_runs[(key, c)])
                row[key] = m
            pairs = list(zip(all_runs[("mcpclass", c)], all_runs[("onnx_peer", c)]))
            row["rps_ratio"] = spread([a["rps"] / b["rps"] for a, b in pairs if b["rps"]])
            row["p50_ratio"] = spread([a["p50_ms"] / b["p50_ms"] for a, b in pairs if b["p50_ms"]])
            row["p99_ratio"] = spread([a["p99_ms"] / b["p99_ms"] for a, b in pairs if b["p99_ms"]])
            http.append(row)
    finally:
        for s in (mc, peer):
            if s:
                s.stop()
        if args.check_only:
            shutil.rmtree(tmp, ignore_errors=True)

    try:
        if args.forward_binary and os.path.exists(args.forward_binary):
            fwd = forward(args, export, [r["text"] for r in rows[:args.forward_texts]], tmp)
        else:
            fwd = {"skipped": f"no bench_encoder_forward at {args.forward_binary!r}"}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "threads": args.threads, "text": TEXT, "seconds_per_run": seconds, "rounds": args.rounds,
        "export": {"dir": export, "format": meta["format"], "opset": meta["opset"],
                   "torch": meta["torch"], "sha256": meta["sha256"],
                   "encoder_vs_tfjs_max_abs_diff": meta["reference_max_abs_diff"]},
        "versions": {"node": subprocess.run(["node", "--version"], capture_output=True,
                                            text=True).stdout.strip(),
                     **{k: package_version(p) for k, p in (
                         ("sdk", "@modelcontextprotocol/sdk"), ("onnxruntime_node", "onnxruntime-node"),
                         ("tokenizer", "@energetic-ai/embeddings"))}},
        "probabilities": check, "agreement": agreed, "http": http,
        "rss_kib_idle": idle, "rss_kib_peak_under_load": peak, "forward": fwd,
        "total_seconds": round(time.monotonic() - started),
    }
    for row in http:
        log(f"c={row['connections']}: mcpclass {row['mcpclass']['rps']:.0f} req/s, peer "
            f"{row['onnx_peer']['rps']:.0f} req/s, ratio {row['rps_ratio']['median']:.2f}")
    if "skipped" not in fwd:
        log(f"forward: native ÷ ORT mean time {fwd['native_vs_ort_mean']['median']:.2f} "
            f"(f32 {fwd['native_f32_vs_ort_mean']['median']:.2f})")
    emit(result, args.json)


if __name__ == "__main__":
    main()
