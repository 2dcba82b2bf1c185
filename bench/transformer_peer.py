#!/usr/bin/env python3
"""`kind: transformer` against ONNX Runtime on the same model (issue 31, "Speed and memory").
In one run, for BERT-base and ModernBERT-base sized checkpoints with random weights
(bench/peers/make_transformer_checkpoints.py: the test fixtures' PyTorch reference modules at
the real sizes, written as safetensors and exported to ONNX from the same module):
  1. check:    mcpclass (`serve`, HTTP, probabilities) and the ONNX peer answer the same texts
               with the same logits: max |Δ| of the centred logits (log p − mean log p, which
               softmax leaves of the logits) ≤ 1e-3, each also against the PyTorch reference;
  2. latency:  one text of exactly --lengths tokens (32, 128), batch 1, --threads intra-op
               threads: bench_transformer (the public API: tokenise, forward, softmax) against
               ONNX Runtime's session.run in Node on the same ids (bench/peers/
               transformer_forward.mjs; no tokenisation); --rounds alternating, medians, and the
               ratio mcpclass ÷ ORT of p50 taken within each round;
  3. HTTP:     `tools/call classify_text` of the 32-token text over POST /mcp, wrk at --conns (8),
               `mcpclass serve` (classifier.threads --threads) against the TypeScript SDK server
               with the same model in onnxruntime-node (bench/peers/server.mjs --transformer,
               intraOpNumThreads --threads), alternating rounds;
  4. FLOPs:    matmul + attention FLOPs per forward, the achieved rate at the p50 and its share
               of this CPU's float32 peak (cores × GHz × 2 FMA ports × 8 lanes × 2);
  5. memory:   RSS of the mcpclass server after load, its peak under load and after the run,
               against the size of model.safetensors.
The load average (os.getloadavg) is recorded around every round: the machine may be shared.

usage: bench/transformer_peer.py --cli BUILD/mcpclass --bench-binary BUILD/bench/learned/bench_transformer
                                 [--threads 2] [--rounds 3] [--repeat 20] [--seconds 8] [--conns 8]
                                 [--models bert,modernbert] [--keep DIR] [--json OUT.json] [--md OUT.md]
       --smoke: the fixtures' tiny sizes, 1 round of 1 s (checks the harness, not the figures)."""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import procs, wrk  # noqa: E402
from onnx_peer import config_json, emit, median_of, mcpclass_server, package_version, spread  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")
TOLERANCE = 1e-3


def log(*args):
    print("transformer:", *args, file=sys.stderr, flush=True)


def load():
    return [round(v, 2) for v in os.getloadavg()]


def peer_server(config, model_dir, threads):
    return procs.Server(["node", os.path.join(PEERS, "server.mjs"), "--config", config,
                         "--transformer", model_dir, "--threads", str(threads), "--http",
                         "127.0.0.1:0"], ready=r"listening on http://127\.0\.0\.1:(\d+)")


def centred(values):
    mean = sum(values) / len(values)
    return [v - mean for v in values]


def centred_log(probabilities):
    return centred([math.log(max(p, 1e-300)) for p in probabilities])


def worst(a, b):
    return max(abs(x - y) for x, y in zip(a, b))


def check(model, mc, mc_sid, peer, peer_sid):
    """Centred logits of both servers on every input, against each other and the reference."""
    rows, mc_peer, mc_ref, peer_ref = [], 0.0, 0.0, 0.0
    for i, (key, item) in enumerate(model["inputs"].items()):
        a, _, _ = procs.classify_over_http(mc.port, mc_sid, item["text"], with_probabilities=True, rid=i + 1)
        b, _, _ = procs.classify_over_http(peer.port, peer_sid, item["text"], with_probabilities=True,
                                           rid=i + 1)
        la, lb, ref = centred_log(a["probabilities"]), centred_log(b["probabilities"]), centred(item["logits"])
        mc_peer, mc_ref, peer_ref = max(mc_peer, worst(la, lb)), max(mc_ref, worst(la, ref)), max(peer_ref, worst(lb, ref))
        rows.append({"input": key, "tokens": len(item["ids"]), "mcpclass": la, "onnx_peer": lb})
    return {"inputs": len(rows), "max_abs_diff_mcpclass_vs_peer": mc_peer,
            "max_abs_diff_mcpclass_vs_reference": mc_ref, "max_abs_diff_peer_vs_reference": peer_ref,
            "rows": rows}


def latency(args, model, tmp):
    """Rounds alternating bench_transformer and ORT's session.run on the same texts / ids."""
    lengths = [str(n) for n in args.lengths.split(",")]
    ids_path = os.path.join(tmp, "latency-ids.json")
    with open(ids_path, "w") as f:
        json.dump({n: model["inputs"][n]["ids"] for n in lengths}, f)
    runs = {n: {"mcpclass": [], "ort": [], "load": []} for n in lengths}
    for round_ in range(args.rounds):
        ort = json.loads(subprocess.run(
            ["node", os.path.join(PEERS, "transformer_forward.mjs"), "--model", model["onnx"],
             "--ids", ids_path, "--threads", str(args.threads), "--repeat", str(args.repeat)],
            check=True, capture_output=True, text=True).stdout)
        for n in lengths:
            out = subprocess.run([args.bench_binary, model["dir"], model["inputs"][n]["text"],
                                  str(args.threads), str(args.repeat)],
                                 check=True, capture_output=True, text=True).stdout
            runs[n]["mcpclass"].append(json.loads(out.strip().splitlines()[-1]))
            runs[n]["ort"].append({k: ort[n][k] for k in ("p50_us", "p90_us", "mean_us")})
            runs[n]["load"].append(load())
            log(f"latency round {round_ + 1} {n} tokens: mcpclass p50 "
                f"{runs[n]['mcpclass'][-1]['p50_us'] / 1e3:.1f} ms, ORT p50 "
                f"{runs[n]['ort'][-1]['p50_us'] / 1e3:.1f} ms (load {load()[0]})")
    out = {}
    for n, r in runs.items():
        out[n] = {"rounds": r,
                  "mcpclass": {"p50_us": median_of(r["mcpclass"], "p50_us")["p50_us"],
                               "p90_us": median_of(r["mcpclass"], "p90_us")["p90_us"]},
                  "ort": {"p50_us": median_of(r["ort"], "p50_us")["p50_us"],
                          "p90_us": median_of(r["ort"], "p90_us")["p90_us"]},
                  "p50_ratio": spread([a["p50_us"] / b["p50_us"] for a, b in zip(r["mcpclass"], r["ort"])]),
                  "p90_ratio": spread([a["p90_us"] / b["p90_us"] for a, b in zip(r["mcpclass"], r["ort"])])}
    return out


def http(args, model, mc, mc_sid, peer, peer_sid):
    text = model["inputs"][args.lengths.split(",")[0]]["text"]
    body = json.dumps(procs.tools_call(0, text), separators=(",", ":")).replace('"id":0', '"id":@ID@', 1)
    ver = {"MCP-Protocol-Version": procs.PROTOCOL_VERSION, "Accept": procs.MCP_ACCEPT}
    targets = {"mcpclass": (mc, {**ver, "Mcp-Session-Id": mc_sid}),
               "onnx_peer": (peer, {**ver, "Mcp-Session-Id": peer_sid})}
    peak = {k: s.rss() for k, (s, _) in targets.items()}
    for s, h in targets.values():  # warm-up
        wrk.run(f"http://127.0.0.1:{s.port}/mcp", wrk.lua_script(h, body, "@ID@", '"class"'), 1, 1)
    seconds = max(1, int(round(args.seconds)))
    rows = []
    for c in [int(c) for c in args.conns.split(",")]:
        runs = {k: [] for k in targets}
        for round_ in range(args.rounds):
            for key, (server, headers) in targets.items():
                sampler = procs.RssSampler(server.pid)
                r = wrk.run(f"http://127.0.0.1:{server.port}/mcp",
                            wrk.lua_script(headers, body, "@ID@", '"class"'), c, seconds)
                peak[key] = max(peak[key], sampler.stop().peak)
                r.update(round=round_ + 1, load=load())
                runs[key].append(r)
                log(f"http round {round_ + 1} {key} c={c}: {r['rps']:.1f} req/s p50 {r['p50_ms']:.1f} ms "
                    f"errors {r['non_2xx'] + r['socket_errors'] + r['bad_answers']} (load {load()[0]})")
        row = {"connections": c, "seconds_per_run": seconds, "text_tokens": int(args.lengths.split(",")[0])}
        for key in targets:
            row[key] = dict(median_of(runs[key]))
            row[key]["rps_of_rounds"] = [round(r["rps"], 1) for r in runs[key]]
            row[key]["errors_all_rounds"] = sum(r["non_2xx"] + r["socket_errors"] + r["bad_answers"]
                                                for r in runs[key])
        row["rps_ratio"] = spread([a["rps"] / b["rps"] for a, b in zip(runs["mcpclass"], runs["onnx_peer"])
                                   if b["rps"]])
        rows.append(row)
    return rows, peak


def forward_flops(size, tokens):
    """Multiply-adds × 2 of the linear layers and attention (QKᵀ, weights·V) of one forward;
    attention counted dense (T × T per layer), as the reference graph computes it. Embedding
    lookup, norms, activations, softmax and the pooler/head (< 0.1%) left out."""
    h, i, t, layers = size["hidden"], size["intermediate"], tokens, size["layers"]
    gated = "local_attention" in size  # ModernBERT's GeGLU: Wi is hidden → 2 × intermediate
    linear = 2 * t * (4 * h * h + (3 if gated else 2) * h * i)
    attention = 4 * t * t * h
    return layers * (linear + attention)


def cpu_peak():
    """float32 FLOP/s of this CPU: cores × GHz × 2 FMA ports × 8 lanes (AVX2) × 2 (an FMA)."""
    flags = open("/proc/cpuinfo").read()
    mhz = [float(m) for m in re.findall(r"cpu MHz\s*:\s*([\d.]+)", flags)]
    cores = os.cpu_count()
    ghz = max(mhz) / 1e3
    model = re.search(r"model name\s*:\s*(.*)", flags).group(1)
    flag_set = set(re.search(r"flags\s*:\s*(.*)", flags).group(1).split())
    return {"model": model, "cores": cores, "ghz": ghz, "avx2": "avx2" in flag_set,
            "fma": "fma" in flag_set, "avx512f": "avx512f" in flag_set,
            "avx512_bf16": "avx512_bf16" in flag_set, "amx_bf16": "amx_bf16" in flag_set,
            "fp32_peak_gflops": cores * ghz * 2 * 8 * 2,
            "formula": f"{cores} cores × {ghz:.3f} GHz × 2 FMA ports × 8 fp32 lanes × 2 FLOP/FMA"}


def run_model(args, name, model, tmp):
    log(f"{name}: {model['parameters']} parameters, {model['weights_bytes'] / 2**20:.0f} MiB weights")
    base = os.path.join(tmp, f"{name}-base.json")
    with open(base, "w") as f:
        json.dump({"classifier": {"kind": "transformer", "model": model["dir"], "max_tokens": 512}}, f)
    config = config_json(args.cli, base, tmp, f"{name}.json", threads=args.threads)
    result = {"parameters": model["parameters"], "weights_bytes": model["weights_bytes"],
              "onnx_bytes": model["onnx_bytes"], "size": model["size"]}
    result["latency"] = latency(args, model, tmp)
    mc = peer = None
    try:
        mc = mcpclass_server(args.cli, config)
        rss_loaded = mc.rss()
        peer = peer_server(config, model["dir"], args.threads)
        mc_sid, peer_sid = procs.open_session(mc.port), procs.open_session(peer.port)
        result["check"] = agreement = check(model, mc, mc_sid, peer, peer_sid)
        log(f"{name} check: max |Δ centred logit| mcpclass vs ONNX peer "
            f"{agreement['max_abs_diff_mcpclass_vs_peer']:.2g}, vs reference "
            f"{agreement['max_abs_diff_mcpclass_vs_reference']:.2g} (peer "
            f"{agreement['max_abs_diff_peer_vs_reference']:.2g})")
        if agreement["max_abs_diff_mcpclass_vs_peer"] > TOLERANCE:
            raise SystemExit(f"transformer: {name}: mcpclass and the ONNX peer differ by "
                             f"{agreement['max_abs_diff_mcpclass_vs_peer']:.3g} > {TOLERANCE}")
        result["http"], peak = http(args, model, mc, mc_sid, peer, peer_sid)
        result["rss_kib"] = {"mcpclass_after_load": rss_loaded, "mcpclass_peak_under_load": peak["mcpclass"],
                             "mcpclass_after_run": mc.rss(), "onnx_peer_peak_under_load": peak["onnx_peer"],
                             "onnx_peer_after_run": peer.rss()}
    finally:
        for s in (mc, peer):
            if s:
                s.stop()
    result["flops"] = {n: forward_flops(model["size"], int(n)) for n in args.lengths.split(",")}
    return result


def summary(result):
    """The goals of issue 31 against this run's figures."""
    peak = result["cpu"]["fp32_peak_gflops"]
    goals = {}
    for name, m in result["models"].items():
        g = {}
        for n, lat in m["latency"].items():
            g[f"p50_{n}_tokens_ratio"] = lat["p50_ratio"]["median"]
            g[f"p50_{n}_tokens_met"] = lat["p50_ratio"]["median"] <= 0.5
            for side in ("mcpclass", "ort"):
                rate = m["flops"][n] / (lat[side]["p50_us"] * 1e3)  # GFLOP/s
                g[f"gflops_{side}_{n}"] = round(rate, 2)
                g[f"peak_share_{side}_{n}"] = round(rate / peak, 4)
        for row in m["http"]:
            g[f"http_c{row['connections']}_rps_ratio"] = row["rps_ratio"]["median"]
            g[f"http_c{row['connections']}_met"] = row["rps_ratio"]["median"] >= 2.0
        budget = m["weights_bytes"] / 1024 + 100 * 1024
        worst_rss = max(m["rss_kib"]["mcpclass_after_load"], m["rss_kib"]["mcpclass_peak_under_load"],
                        m["rss_kib"]["mcpclass_after_run"])
        g["rss_over_weights_mib"] = round((worst_rss - m["weights_bytes"] / 1024) / 1024, 1)
        g["rss_met"] = worst_rss <= budget
        goals[name] = g
    return goals


def markdown(r):
    """The tables of bench/results/transformer-onnx.md from a run's JSON."""
    cpu, lines = r["cpu"], []
    add = lines.append
    add(f"Run {r['date']}: {cpu['model']}, {cpu['cores']} cores at {cpu['ghz']:.3f} GHz (AVX2 "
        f"{'yes' if cpu['avx2'] else 'no'}, FMA {'yes' if cpu['fma'] else 'no'}, AVX-512 "
        f"{'yes' if cpu['avx512f'] else 'no'}, AVX-512 BF16 {'yes' if cpu['avx512_bf16'] else 'no'}, "
        f"AMX {'yes' if cpu['amx_bf16'] else 'no'}); {r['threads']} intra-op threads on both sides; "
        f"{r['rounds']} rounds alternating, {r['repeat']} timed calls per length per round; "
        f"onnxruntime-node {r['versions']['onnxruntime_node']}, node {r['versions']['node']}, "
        f"ONNX opset {r['export']['opset']} from torch {r['export']['torch']}. Load average "
        f"(1, 5, 15 min) {r['load_at_start']} at the start, {r['load_at_end']} at the end.")
    add("")
    add(f"fp32 peak: {cpu['formula']} = **{cpu['fp32_peak_gflops']:.1f} GFLOP/s**; without "
        "AVX-512 BF16 or AMX there is no faster bf16 path (oneDNN runs bf16 by converting to "
        "fp32), so the bf16 peak is the same figure.")
    add("")
    add("| model | tokens | mcpclass p50 / p90 ms | ORT p50 / p90 ms | p50 ratio (min–max) | goal ≤ 0.5× | "
        "GFLOP per forward | mcpclass GFLOP/s (% of peak) | ORT GFLOP/s (% of peak) |")
    add("|---|---|---|---|---|---|---|---|---|")
    for name, m in r["models"].items():
        g = r["goals"][name]
        for n, lat in m["latency"].items():
            q = lat["p50_ratio"]
            add(f"| {name} | {n} | {lat['mcpclass']['p50_us'] / 1e3:.1f} / {lat['mcpclass']['p90_us'] / 1e3:.1f} | "
                f"{lat['ort']['p50_us'] / 1e3:.1f} / {lat['ort']['p90_us'] / 1e3:.1f} | "
                f"{q['median']:.2f} ({q['min']:.2f}–{q['max']:.2f}) | {'met' if g[f'p50_{n}_tokens_met'] else 'missed'} | "
                f"{m['flops'][n] / 1e9:.2f} | {g[f'gflops_mcpclass_{n}']:.2f} ({100 * g[f'peak_share_mcpclass_{n}']:.1f}%) | "
                f"{g[f'gflops_ort_{n}']:.2f} ({100 * g[f'peak_share_ort_{n}']:.1f}%) |")
    add("")
    add("| model | connections | mcpclass req/s (rounds) | ONNX peer req/s (rounds) | ratio (min–max) | goal ≥ 2× | errors |")
    add("|---|---|---|---|---|---|---|")
    for name, m in r["models"].items():
        for row in m["http"]:
            q, c = row["rps_ratio"], row["connections"]
            add(f"| {name} | {c} | {row['mcpclass']['rps']:.1f} ({row['mcpclass']['rps_of_rounds']}) | "
                f"{row['onnx_peer']['rps']:.1f} ({row['onnx_peer']['rps_of_rounds']}) | {q['median']:.2f} "
                f"({q['min']:.2f}–{q['max']:.2f}) | {'met' if r['goals'][name][f'http_c{c}_met'] else 'missed'} | "
                f"{row['mcpclass']['errors_all_rounds']} / {row['onnx_peer']['errors_all_rounds']} |")
    add("")
    add("| model | weights MiB | mcpclass RSS MiB after load / peak under load / after run | over weights MiB | goal ≤ +100 MiB | ONNX peer RSS MiB peak |")
    add("|---|---|---|---|---|---|")
    for name, m in r["models"].items():
        k, g = m["rss_kib"], r["goals"][name]
        add(f"| {name} | {m['weights_bytes'] / 2**20:.0f} | {k['mcpclass_after_load'] / 1024:.0f} / "
            f"{k['mcpclass_peak_under_load'] / 1024:.0f} / {k['mcpclass_after_run'] / 1024:.0f} | "
            f"{g['rss_over_weights_mib']:.0f} | {'met' if g['rss_met'] else 'missed'} | "
            f"{k['onnx_peer_peak_under_load'] / 1024:.0f} |")
    add("")
    add("| model | inputs | max abs Δ centred logits mcpclass vs ORT | mcpclass vs PyTorch | ORT vs PyTorch |")
    add("|---|---|---|---|---|")
    for name, m in r["models"].items():
        c = m["check"]
        add(f"| {name} | {c['inputs']} | {c['max_abs_diff_mcpclass_vs_peer']:.2g} | "
            f"{c['max_abs_diff_mcpclass_vs_reference']:.2g} | {c['max_abs_diff_peer_vs_reference']:.2g} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--bench-binary", required=True, help="bench/learned/bench_transformer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--conns", default="8")
    ap.add_argument("--lengths", default="32,128")
    ap.add_argument("--models", default="bert,modernbert")
    ap.add_argument("--keep", help="make the checkpoints here and keep them for the next run with "
                    "the same arguments (default: a temp dir, removed)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--md", help="the tables as Markdown (bench/results/transformer-onnx.md's)")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.repeat, args.seconds = 1, 3, 1
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="transformer-bench.")
    try:
        out = args.keep or os.path.join(tmp, "checkpoints")
        make = ["/usr/bin/python3", os.path.join(PEERS, "make_transformer_checkpoints.py"), "--out", out,
                "--lengths", args.lengths, "--only", args.models] + (["--tiny"] if args.smoke else [])
        manifest = os.path.join(out, "manifest.json")
        made = json.load(open(manifest)) if args.keep and os.path.exists(manifest) else None
        if made is None or made.get("argv") != make[2:]:
            log("making the checkpoints and ONNX exports")
            made = json.loads(subprocess.run(make, check=True, capture_output=True, text=True).stdout)
            made["argv"] = make[2:]
            if args.keep:
                with open(manifest, "w") as f:
                    json.dump(made, f)
        result = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "smoke": args.smoke,
                  "threads": args.threads, "rounds": args.rounds, "repeat": args.repeat,
                  "load_at_start": load(), "cpu": cpu_peak(),
                  "export": {"opset": made["opset"], "torch": made["torch"]},
                  "versions": {"node": subprocess.run(["node", "--version"], capture_output=True,
                                                      text=True).stdout.strip(),
                               "sdk": package_version("@modelcontextprotocol/sdk"),
                               "onnxruntime_node": package_version("onnxruntime-node")},
                  "models": {}}
        for name, model in made["models"].items():
            result["models"][name] = run_model(args, name, model, tmp)
        result["load_at_end"] = load()
        result["goals"] = summary(result)
        result["total_seconds"] = round(time.monotonic() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, g in result["goals"].items():
        log(f"{name}: {json.dumps(g)}")
    if args.md:
        with open(args.md, "w") as f:
            f.write(markdown(result))
    emit(result, args.json)


if __name__ == "__main__":
    main()
