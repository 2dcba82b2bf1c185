#!/usr/bin/env python3
"""`kind: transformer` against ONNX Runtime on the same model (issue 31, "Speed and memory").
In one run, for BERT-base and ModernBERT-base sized checkpoints with random weights
(bench/peers/make_transformer_checkpoints.py: the test fixtures' PyTorch reference modules at
the real sizes, written as safetensors and exported to ONNX from the same module):
  1. check:    mcpclass (`serve`, HTTP, probabilities) and the ONNX peer answer the same texts
               with the same logits: max |Δ| of the centred logits (log p − mean log p, which
               softmax leaves of the logits) ≤ 1e-3, each also against the PyTorch reference;
  2. latency:  one text of exactly --lengths tokens (32, 128), batch 1, --threads intra-op
               threads: bench_transformer (the public API: tokenise, forward, softmax) at each
               of --precisions (f32, int8; the CPU's best kernel set) against ONNX Runtime's
               session.run in Node on the same ids (bench/peers/transformer_forward.mjs; no
               tokenisation) of the fp32 export and of its dynamic-int8 rewrite
               (bench/peers/quantize_onnx_int8.py, as quantize_dynamic writes it; skipped with a
               message without python3-onnx); --rounds alternating, medians, and the ratios
               mcpclass ÷ ORT of p50 taken within each round;
  3. HTTP:     `tools/call classify_text` of the 32-token text over POST /mcp, wrk at --conns (8),
               `mcpclass serve` at each precision (classifier.threads --threads) against the
               TypeScript SDK server with the same model in onnxruntime-node (bench/peers/
               server.mjs --transformer, intraOpNumThreads --threads; fp32, and its int8
               rewrite where python3-onnx made one), alternating rounds;
  4. FLOPs:    matmul + attention FLOPs per forward, the achieved rate at the p50 and its share
               of the peak of the kernel set that ran (cores × GHz × the unit's FLOP per cycle,
               measured by --units-binary or else from OPS_PER_CYCLE; int8 counts its
               multiply-adds against the fp32 peak too, which it exceeds where the int8 units
               are faster);
  5. memory:   RSS of the mcpclass server after load, its peak under load and after the run,
               against the size of model.safetensors.
The load average (os.getloadavg) is recorded around every round: the machine may be shared.

usage: bench/transformer_peer.py --cli BUILD/mcpclass --bench-binary BUILD/bench/learned/bench_transformer
                                 [--units-binary BUILD/bench/learned/bench_units]
                                 [--threads 2] [--rounds 3] [--repeat 20] [--seconds 8] [--conns 8]
                                 [--precisions f32,int8]
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


def peer_server(config, model_dir, threads, export="model.onnx"):
    return procs.Server(["node", os.path.join(PEERS, "server.mjs"), "--config", config,
                         "--transformer", model_dir, "--model-file", export, "--threads",
                         str(threads), "--http", "127.0.0.1:0"],
                        ready=r"listening on http://127\.0\.0\.1:(\d+)")


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


def ort_models(model):
    """The fp32 export and, when python3-onnx can make it, its dynamic-int8 rewrite beside it."""
    out = {"fp32": model["onnx"]}
    int8 = os.path.join(os.path.dirname(model["onnx"]), "model-int8.onnx")
    if not os.path.exists(int8):
        made = subprocess.run(["/usr/bin/python3", os.path.join(PEERS, "quantize_onnx_int8.py"),
                               model["onnx"], int8], capture_output=True, text=True)
        if made.returncode != 0:
            log(f"no ONNX Runtime int8 peer: {made.stderr.strip().splitlines()[-1:]}")
            return out
    out["int8"] = int8
    return out


def latency(args, model, tmp):
    """Rounds alternating bench_transformer (each precision) and ORT's session.run (each export)
    on the same texts / ids."""
    lengths = [str(n) for n in args.lengths.split(",")]
    precisions = args.precisions.split(",")
    ids_path = os.path.join(tmp, "latency-ids.json")
    with open(ids_path, "w") as f:
        json.dump({n: model["inputs"][n]["ids"] for n in lengths}, f)
    exports = ort_models(model)
    runs = {n: {"mcpclass": {p: [] for p in precisions}, "ort": {k: [] for k in exports},
                "load": [], "kernels": None} for n in lengths}
    for round_ in range(args.rounds):
        for key, path in exports.items():
            ort = json.loads(subprocess.run(
                ["node", os.path.join(PEERS, "transformer_forward.mjs"), "--model", path,
                 "--ids", ids_path, "--threads", str(args.threads), "--repeat", str(args.repeat)],
                check=True, capture_output=True, text=True).stdout)
            for n in lengths:
                runs[n]["ort"][key].append({k: ort[n][k] for k in ("p50_us", "p90_us", "mean_us")})
        for n in lengths:
            for p in precisions:
                out = subprocess.run([args.bench_binary, model["dir"], model["inputs"][n]["text"],
                                      str(args.threads), str(args.repeat), p],
                                     check=True, capture_output=True, text=True).stdout
                run = json.loads(out.strip().splitlines()[-1])
                runs[n]["mcpclass"][p].append(run)
                runs[n]["kernels"] = run.get("kernels")
            runs[n]["load"].append(load())
            log(f"latency round {round_ + 1} {n} tokens: " + ", ".join(
                [f"mcpclass {p} p50 {runs[n]['mcpclass'][p][-1]['p50_us'] / 1e3:.1f} ms" for p in precisions]
                + [f"ORT {k} p50 {runs[n]['ort'][k][-1]['p50_us'] / 1e3:.1f} ms" for k in exports])
                + f" (load {load()[0]})")
    out = {}
    for n, r in runs.items():
        row = {"rounds": r, "kernels": r["kernels"], "mcpclass": {}, "ort": {}, "p50_ratio": {}}
        for side, series in (("mcpclass", r["mcpclass"]), ("ort", r["ort"])):
            for key, values in series.items():
                row[side][key] = {"p50_us": median_of(values, "p50_us")["p50_us"],
                                  "p90_us": median_of(values, "p90_us")["p90_us"]}
        for p, mine in r["mcpclass"].items():
            for k, theirs in r["ort"].items():
                row["p50_ratio"][f"{p}/ort_{k}"] = spread([a["p50_us"] / b["p50_us"]
                                                           for a, b in zip(mine, theirs)])
        out[n] = row
    return out


def http(args, model, servers):
    """servers: name → (Server, session id); "onnx_peer" (fp32) is the baseline of every ratio,
    "onnx_peer_int8" (when there) of a second one."""
    text = model["inputs"][args.lengths.split(",")[0]]["text"]
    body = json.dumps(procs.tools_call(0, text), separators=(",", ":")).replace('"id":0', '"id":@ID@', 1)
    ver = {"MCP-Protocol-Version": procs.PROTOCOL_VERSION, "Accept": procs.MCP_ACCEPT}
    targets = {k: (server, {**ver, "Mcp-Session-Id": sid}) for k, (server, sid) in servers.items()}
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
        def ratios(base, keys):
            return {k: spread([a["rps"] / b["rps"] for a, b in zip(runs[k], runs[base]) if b["rps"]])
                    for k in keys}
        # The int8 peer against the fp32 one too: ONNX Runtime's own int8 gain.
        row["rps_ratio"] = ratios("onnx_peer", [k for k in targets if k != "onnx_peer"])
        if "onnx_peer_int8" in runs:
            row["rps_ratio_int8_peer"] = ratios(
                "onnx_peer_int8", [k for k in targets if not k.startswith("onnx_peer")])
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


def cpu_peak(units_binary=None):
    """float32 FLOP/s of this CPU: cores × GHz × the fp32 FLOP per cycle of the widest fp32
    kernels the engine has for it. With `units_binary` (bench/learned/bench_units) the clock and
    every unit's rate are measured on this core; without it the clock is /proc/cpuinfo's (a VM's
    nominal figure, often below the boost clock the cores run at) and the rates OPS_PER_CYCLE's."""
    flags = open("/proc/cpuinfo").read()
    mhz = [float(m) for m in re.findall(r"cpu MHz\s*:\s*([\d.]+)", flags)]
    cores = os.cpu_count()
    ghz = max(mhz) / 1e3
    model = re.search(r"model name\s*:\s*(.*)", flags).group(1)
    flag_set = set(re.search(r"flags\s*:\s*(.*)", flags).group(1).split())
    measured = {}
    if units_binary:
        units = json.loads(subprocess.run([units_binary], check=True, capture_output=True,
                                          text=True).stdout)
        ghz = units["ghz"]
        measured = {"/".join(key): round(units[name]["ops_per_cycle"], 2)
                    for key, name in MEASURED_UNITS.items() if name in units}
    f32 = ("f32", "avx512" if {"avx512f", "avx512bw", "avx512vl"} <= flag_set else "avx2")
    per_cycle = measured.get("/".join(f32), OPS_PER_CYCLE[f32])
    source = "measured by bench_units" if units_binary else "cpuinfo, OPS_PER_CYCLE"
    return {"model": model, "cores": cores, "ghz": ghz, "avx2": "avx2" in flag_set,
            "fma": "fma" in flag_set, "avx512f": "avx512f" in flag_set,
            "avx512_bf16": "avx512_bf16" in flag_set, "amx_bf16": "amx_bf16" in flag_set,
            "amx_int8": "amx_int8" in flag_set, "avx512_vnni": "avx512_vnni" in flag_set,
            "avx_vnni": "avx_vnni" in flag_set, "measured_ops_per_cycle": measured,
            "fp32_peak_gflops": cores * ghz * per_cycle,
            "formula": f"{cores} cores × {ghz:.3f} GHz × {per_cycle:.1f} FLOP/cycle of "
                       f"{'/'.join(f32)} ({source})"}


# Multiply-adds × 2 per cycle and core of each kernel set's unit (the issue's "right peak for the
# kernel set that ran") where bench_units did not measure it, with 2 vector FMA ports (Xeon
# Platinum / Gold 6xxx and later; a 1-port Xeon has half the vector figures, which CPUID does not
# tell; Zen 4 has 2 ports of 256 bits, so a zmm product issues once per cycle: half the avx512
# figures, as bench_units measures there):
#   f32   avx2: 2 ports × 8 lanes × 2; avx512 sets: 2 × 16 × 2
#   bf16  vdpbf16ps: 2 ports × 32 pairs' products × 2; AMX tdpbf16ps: 16 × 16 × 32 multiply-adds
#         per 16 cycles = 512 per cycle, × 2
#   int8  avx2 (vpmaddubsw + vpmaddwd: 2 instructions per 32 products): 2 × 32 / 2 × 2;
#         avx2_vnni: 2 × 32 × 2; avx512 VNNI: 2 × 64 × 2; AMX tdpbssd: 16 × 16 × 64 per 16
#         cycles = 1024 per cycle, × 2
OPS_PER_CYCLE = {
    ("f32", "avx2"): 32, ("f32", "avx512"): 64,
    ("bf16", "avx512"): 128, ("bf16", "amx"): 1024,
    ("int8", "avx2"): 64, ("int8", "avx2_vnni"): 128, ("int8", "avx512_vnni"): 256,
    ("int8", "amx"): 2048,
}

# The OPS_PER_CYCLE keys bench_units measures, by the names it prints.
MEASURED_UNITS = {
    ("f32", "avx2"): "f32 avx2 (vfmadd ymm)",
    ("f32", "avx512"): "f32 avx512 (vfmadd zmm)",
    ("bf16", "avx512"): "bf16 avx512 (vdpbf16ps zmm)",
    ("int8", "avx2"): "int8 avx2 (vpmaddubsw + vpmaddwd + vpaddd ymm)",
    ("int8", "avx512_vnni"): "int8 avx512 (vpdpbusd zmm)",
}


def unit_of(precision, kernels):
    """The OPS_PER_CYCLE key of a precision on a kernel set (mcpclass's names)."""
    if kernels == "portable":
        return None
    if precision == "f32":
        return ("f32", "avx2" if kernels in ("avx2", "avx2_vnni") else "avx512")
    if precision == "bf16":
        return ("bf16", "amx" if kernels == "amx" else "avx512")
    if kernels in ("avx2", "avx512"):  # AVX-512 has no vpsignb: avx2's int8 tile
        return ("int8", "avx2")
    return ("int8", "avx512_vnni" if kernels == "avx512_bf16" else kernels)


def ort_unit(cpu, key):
    """The unit ONNX Runtime's MLAS picks on this CPU: fp32 AVX-512 or FMA3; int8 AMX, AVX-512
    VNNI, AVX-VNNI or AVX2 (its qgemm dispatch, best first)."""
    if key == "fp32":
        return ("f32", "avx512" if cpu["avx512f"] else "avx2")
    for flag, unit in (("amx_int8", "amx"), ("avx512_vnni", "avx512_vnni"), ("avx_vnni", "avx2_vnni")):
        if cpu.get(flag):
            return ("int8", unit)
    return ("int8", "avx2")


def peak_gops(cpu, unit):
    """GFLOP/s (GOP/s for int8) of `unit` on every core at the clock read (measured rates first)."""
    if not unit:
        return None
    per_cycle = cpu.get("measured_ops_per_cycle", {}).get("/".join(unit), OPS_PER_CYCLE[unit])
    return cpu["cores"] * cpu["ghz"] * per_cycle


def run_model(args, name, model, tmp):
    log(f"{name}: {model['parameters']} parameters, {model['weights_bytes'] / 2**20:.0f} MiB weights")
    base = os.path.join(tmp, f"{name}-base.json")
    with open(base, "w") as f:
        json.dump({"classifier": {"kind": "transformer", "model": model["dir"], "max_tokens": 512}}, f)
    result = {"parameters": model["parameters"], "weights_bytes": model["weights_bytes"],
              "onnx_bytes": model["onnx_bytes"], "size": model["size"]}
    result["latency"] = latency(args, model, tmp)
    precisions = args.precisions.split(",")
    configs = {p: config_json(args.cli, base, tmp, f"{name}-{p}.json", threads=args.threads, precision=p)
               for p in precisions}
    servers = {}
    try:
        for p in precisions:
            servers[p] = mcpclass_server(args.cli, configs[p])
        rss_loaded = {p: servers[p].rss() for p in precisions}
        peer = servers["onnx_peer"] = peer_server(configs[precisions[0]], model["dir"], args.threads)
        exports = ort_models(model)
        if "int8" in exports:
            servers["onnx_peer_int8"] = peer_server(configs[precisions[0]], model["dir"],
                                                    args.threads, os.path.basename(exports["int8"]))
        sids = {k: procs.open_session(v.port) for k, v in servers.items()}
        mc, mc_sid, peer_sid = servers[precisions[0]], sids[precisions[0]], sids["onnx_peer"]
        result["check"] = agreement = check(model, mc, mc_sid, peer, peer_sid)
        log(f"{name} check: max |Δ centred logit| mcpclass {precisions[0]} vs ONNX peer "
            f"{agreement['max_abs_diff_mcpclass_vs_peer']:.2g}, vs reference "
            f"{agreement['max_abs_diff_mcpclass_vs_reference']:.2g} (peer "
            f"{agreement['max_abs_diff_peer_vs_reference']:.2g})")
        if precisions[0] == "f32" and agreement["max_abs_diff_mcpclass_vs_peer"] > TOLERANCE:
            raise SystemExit(f"transformer: {name}: mcpclass and the ONNX peer differ by "
                             f"{agreement['max_abs_diff_mcpclass_vs_peer']:.3g} > {TOLERANCE}")
        result["http"], peak = http(args, model, {k: (v, sids[k]) for k, v in servers.items()})
        result["rss_kib"] = {p: {"after_load": rss_loaded[p], "peak_under_load": peak[p],
                                 "after_run": servers[p].rss()} for p in precisions}
        for key in ("onnx_peer", "onnx_peer_int8"):
            if key in servers:
                result["rss_kib"][key] = {"peak_under_load": peak[key],
                                          "after_run": servers[key].rss()}
    finally:
        for server in servers.values():
            server.stop()
    result["flops"] = {n: forward_flops(model["size"], int(n)) for n in args.lengths.split(",")}
    return result


# Issue 46's goals: p50 ratios (mcpclass ÷ ORT) and HTTP throughput ratios (mcpclass ÷ the ONNX
# fp32 peer), per the CPU's class; the int8 ÷ ORT int8 goal is 1.0 everywhere.
GOALS_AVX512 = {"f32/ort_fp32": 1.0, "int8/ort_fp32": 0.5, "int8/ort_int8": 1.0, "bf16/ort_fp32": 0.6}
GOALS_AVX2 = {"f32/ort_fp32": 1.0, "int8/ort_fp32": 0.6, "int8/ort_int8": 1.0}
HTTP_GOALS = {"f32": 1.0, "int8": 2.0}
HTTP_GOALS_INT8_PEER = {"int8": 1.0}


def summary(result):
    """The goals of issue 46 against this run's figures."""
    cpu = result["cpu"]
    peak = cpu["fp32_peak_gflops"]
    goals_for = GOALS_AVX512 if cpu["avx512_bf16"] else GOALS_AVX2
    goals = {}
    for name, m in result["models"].items():
        g = {}
        for n, lat in m["latency"].items():
            for key, ratio in lat["p50_ratio"].items():
                g[f"p50_{n}_{key}"] = ratio["median"]
                if key in goals_for:
                    g[f"p50_{n}_{key}_met"] = ratio["median"] <= goals_for[key]
            for side in ("mcpclass", "ort"):
                for key, figures in lat[side].items():
                    rate = m["flops"][n] / (figures["p50_us"] * 1e3)  # GFLOP/s (int8: GOP/s)
                    g[f"gflops_{side}_{key}_{n}"] = round(rate, 2)
                    g[f"peak_share_{side}_{key}_{n}"] = round(rate / peak, 4)
                    # Against the peak of the unit that ran (OPS_PER_CYCLE).
                    unit = unit_of(key, lat["kernels"]) if side == "mcpclass" else ort_unit(cpu, key)
                    unit_peak = peak_gops(cpu, unit)
                    g[f"unit_{side}_{key}_{n}"] = "/".join(unit) if unit else "portable"
                    g[f"unit_peak_{side}_{key}_{n}"] = round(unit_peak, 1) if unit_peak else None
                    g[f"unit_share_{side}_{key}_{n}"] = round(rate / unit_peak, 4) if unit_peak else None
        for row in m["http"]:
            for key, ratio in row["rps_ratio"].items():
                g[f"http_c{row['connections']}_{key}_rps_ratio"] = ratio["median"]
                if key in HTTP_GOALS:
                    g[f"http_c{row['connections']}_{key}_met"] = ratio["median"] >= HTTP_GOALS[key]
            for key, ratio in row.get("rps_ratio_int8_peer", {}).items():
                g[f"http_c{row['connections']}_{key}_rps_ratio_int8_peer"] = ratio["median"]
                if key in HTTP_GOALS_INT8_PEER:
                    g[f"http_c{row['connections']}_{key}_int8_peer_met"] = (
                        ratio["median"] >= HTTP_GOALS_INT8_PEER[key])
        for p, rss in m["rss_kib"].items():
            if p.startswith("onnx_peer"):
                continue
            worst = max(rss.values())
            g[f"rss_{p}_mib"] = round(worst / 1024, 1)
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
    add(f"fp32 peak: {cpu['formula']} = **{cpu['fp32_peak_gflops']:.1f} GFLOP/s**. The last column: "
        "the rate against the peak of the unit that ran (multiply-adds × 2 per cycle and core of that "
        "instruction set, × cores × the clock: " + ("measured on this core by bench_units, "
        f"{json.dumps(cpu['measured_ops_per_cycle'])}, the rest from OPS_PER_CYCLE"
        if cpu.get("measured_ops_per_cycle") else "bench/transformer_peer.py OPS_PER_CYCLE and "
        "the clock of /proc/cpuinfo") + "; ORT's unit is the one its MLAS picks on this CPU).")
    add("")
    add("| model | tokens | kernels | side | p50 / p90 ms | GFLOP/s (% of fp32 peak) | unit: peak GOP/s (% of it) |")
    add("|---|---|---|---|---|---|---|")
    for name, m in r["models"].items():
        g = r["goals"][name]
        for n, lat in m["latency"].items():
            for side, label in (("mcpclass", "mcpclass"), ("ort", "ORT")):
                for key, f in lat[side].items():
                    add(f"| {name} | {n} | {lat['kernels'] if side == 'mcpclass' else 'ORT'} | {label} {key} | "
                        f"{f['p50_us'] / 1e3:.1f} / {f['p90_us'] / 1e3:.1f} | "
                        f"{g[f'gflops_{side}_{key}_{n}']:.1f} ({100 * g[f'peak_share_{side}_{key}_{n}']:.0f}%) | "
                        + (f"{g[f'unit_{side}_{key}_{n}']}: {g[f'unit_peak_{side}_{key}_{n}']:.0f} "
                           f"({100 * g[f'unit_share_{side}_{key}_{n}']:.0f}%) |"
                           if g.get(f"unit_peak_{side}_{key}_{n}") else "— |"))
    add("")
    add("| model | tokens | p50 ratio | median (min–max) | goal | met |")
    add("|---|---|---|---|---|---|")
    goals_for = GOALS_AVX512 if cpu["avx512_bf16"] else GOALS_AVX2
    for name, m in r["models"].items():
        g = r["goals"][name]
        for n, lat in m["latency"].items():
            for key, q in lat["p50_ratio"].items():
                goal = goals_for.get(key)
                add(f"| {name} | {n} | mcpclass {key.replace('/', ' ÷ ')} | {q['median']:.2f} "
                    f"({q['min']:.2f}–{q['max']:.2f}) | {'≤ ' + str(goal) if goal else '—'} | "
                    f"{('met' if g[f'p50_{n}_{key}_met'] else 'missed') if goal else '—'} |")
    add("")
    add("| model | connections | server | req/s (rounds) | ÷ ONNX fp32 peer (min–max) | goal | "
        "÷ ONNX int8 peer (min–max) | goal | errors |")
    add("|---|---|---|---|---|---|---|---|---|")
    def ratio(q):
        return f"{q['median']:.2f} ({q['min']:.2f}–{q['max']:.2f})" if q else "—"
    for name, m in r["models"].items():
        for row in m["http"]:
            c = row["connections"]
            for key in row:
                if not isinstance(row[key], dict) or "rps" not in row[key]:
                    continue
                goal, goal8 = HTTP_GOALS.get(key), HTTP_GOALS_INT8_PEER.get(key)
                server = {"onnx_peer": "ONNX peer fp32", "onnx_peer_int8": "ONNX peer int8"}.get(
                    key, f"mcpclass {key}")
                add(f"| {name} | {c} | {server} | {row[key]['rps']:.1f} ({row[key]['rps_of_rounds']}) | "
                    f"{ratio(row['rps_ratio'].get(key))} | {'≥ ' + str(goal) if goal else '—'} | "
                    f"{ratio(row.get('rps_ratio_int8_peer', {}).get(key))} | "
                    f"{'≥ ' + str(goal8) if goal8 and 'rps_ratio_int8_peer' in row else '—'} | "
                    f"{row[key]['errors_all_rounds']} |")
    add("")
    add("| model | weights MiB | server | RSS MiB after load / peak under load / after run |")
    add("|---|---|---|---|")
    for name, m in r["models"].items():
        for p, k in m["rss_kib"].items():
            add(f"| {name} | {m['weights_bytes'] / 2**20:.0f} | {p} | "
                f"{k.get('after_load', 0) / 1024:.0f} / {k['peak_under_load'] / 1024:.0f} / "
                f"{k['after_run'] / 1024:.0f} |")
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
    ap.add_argument("--units-binary", help="bench/learned/bench_units: the clock and each unit's "
                    "rate measured on this core for the peaks (default: cpuinfo and OPS_PER_CYCLE)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--conns", default="8")
    ap.add_argument("--lengths", default="32,128")
    ap.add_argument("--precisions", default="f32,int8",
                    help="mcpclass precisions to time (the first is checked against ORT fp32)")
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
                  "load_at_start": load(), "cpu": cpu_peak(args.units_binary),
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
