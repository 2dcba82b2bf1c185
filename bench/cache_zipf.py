#!/usr/bin/env python3
"""The result cache on a Zipf-distributed query stream (issue 14): the learned default served
over `POST /mcp/tools/call`, once without and once with `server.cache`, in the same run, the
two alternating over rounds (median). Queries are MMLU-Pro questions (models/data), drawn by wrk
with probability proportional to 1/rank^s, so a few are frequent and most are rare, as in a
router's traffic. Reports req/s, p50/p99 and the hit ratio of the measured window (/metrics).

usage: bench/cache_zipf.py --cli build/mcpclass [--config models/mmlu14.yaml] [--json OUT]
The learned config needs models/setup.sh (bench/run.sh and the test command run it)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import procs, wrk  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The texts and the Zipf CDF are baked into the script; each wrk thread seeds its own generator.
PRELUDE = """local texts = {%(texts)s}
local cdf = {%(cdf)s}"""
INIT = "math.randomseed(%(seed)d + 7919 * tid)"
REQUEST = r"""function request()
  local u, lo, hi = math.random(), 1, #cdf
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return wrk.format(nil, nil, nil,
    '{"name":"classify_text","arguments":{"text":' .. texts[lo] .. '}}')
end"""


def zipf_cdf(n, s):
    weights = [1.0 / (rank ** s) for rank in range(1, n + 1)]
    total, acc, cdf = sum(weights), 0.0, []
    for w in weights:
        acc += w
        cdf.append(acc / total)
    cdf[-1] = 1.0
    return cdf


def script(texts, s, seed):
    """wrk's Lua: bench/lib/wrk.py's checks and report around a Zipf draw of the texts."""
    quoted = ",".join("[==[" + json.dumps(t) + "]==]" for t in texts)
    cdf = ",".join(f"{p:.9f}" for p in zipf_cdf(len(texts), s))
    return wrk.lua_script({}, "{}", expect='"isError":false',
                          prelude=PRELUDE % {"texts": quoted, "cdf": cdf},
                          init=INIT % {"seed": seed}, request=REQUEST)


def questions(path, n):
    """The first n distinct questions of a JSONL file, in a fixed shuffled order (rank 1 first)."""
    seen, out = set(), []
    with open(path) as f:
        for line in f:
            text = json.loads(line)["text"]
            if text not in seen and "]==]" not in text:
                seen.add(text)
                out.append(text)
    # A fixed permutation so the frequent ranks are not all one category (the file is sorted).
    out = [out[(i * 7919) % len(out)] for i in range(len(out))]
    return out[:n]


def cache_counters(port):
    """(hits, misses) from /metrics; (0, 0) without a cache (the series are absent then)."""
    try:
        return (procs.metric(port, "mcpclass_cache_hits_total"),
                procs.metric(port, "mcpclass_cache_misses_total"))
    except AssertionError:
        return 0, 0


def measure(cli, config, lua, connections, seconds, warmup):
    server = procs.Server([cli, "serve", "--http", "127.0.0.1:0", "--config", config],
                          ready=r"on http://127\.0\.0\.1:(\d+)/mcp", timeout=300)
    try:
        url = f"http://127.0.0.1:{server.port}/mcp/tools/call"
        if warmup:
            wrk.run(url, lua, connections=connections, seconds=warmup)
        hits0, misses0 = cache_counters(server.port)
        r = wrk.run(url, lua, connections=connections, seconds=seconds)
        hits1, misses1 = cache_counters(server.port)
        lookups = (hits1 - hits0) + (misses1 - misses0)
        r["hit_ratio"] = (hits1 - hits0) / lookups if lookups else None
        return r
    finally:
        server.stop()


def run(cli, config, distinct=2000, exponent=1.0, entries=500, connections=8, seconds=5,
        warmup=2, rounds=3, log=lambda *a: None):
    texts = questions(os.path.join(ROOT, "models/data/mmlu_pro_questions.jsonl"), distinct)
    document = json.loads(subprocess.run([cli, "config", "--config", config], check=True,
                                         capture_output=True, text=True).stdout)
    tmp = tempfile.mkdtemp(prefix="mcpcache.")
    paths = {}
    for label, cache_entries in (("uncached", 0), ("cached", entries)):
        document.setdefault("server", {})["cache"] = {"entries": cache_entries, "ttl": 0}
        paths[label] = os.path.join(tmp, label + ".json")
        with open(paths[label], "w") as f:
            json.dump(document, f)
    runs = {"uncached": [], "cached": []}
    for i in range(rounds):
        order = ("uncached", "cached") if i % 2 == 0 else ("cached", "uncached")
        for label in order:
            r = measure(cli, paths[label], script(texts, exponent, 1000 + i), connections, seconds,
                        warmup)
            for key in ("non_2xx", "socket_errors", "bad_answers"):
                if r[key]:
                    raise RuntimeError(f"{label}: {key} {r[key]}: {r['bad_sample']}")
            log(f"cache {label} round {i + 1}: {r['rps']:.0f} req/s, p50 {r['p50_ms']:.2f} ms, "
                f"p99 {r['p99_ms']:.2f} ms, hit ratio {r['hit_ratio']}")
            runs[label].append(r)
    median = {label: sorted(rs, key=lambda r: r["rps"])[len(rs) // 2] for label, rs in runs.items()}
    return {
        "distinct_texts": len(texts), "zipf_exponent": exponent, "cache_entries": entries,
        "connections": connections, "seconds": seconds, "warmup_seconds": warmup,
        "rounds": rounds, "config": os.path.relpath(config, ROOT),
        "uncached": median["uncached"], "cached": median["cached"],
        "all_rps": {label: [round(r["rps"]) for r in rs] for label, rs in runs.items()},
        "speedup_rps": median["cached"]["rps"] / median["uncached"]["rps"],
        "speedup_p50": median["uncached"]["p50_ms"] / median["cached"]["p50_ms"],
        "hit_ratio": statistics.median(r["hit_ratio"] for r in runs["cached"]),
    }


def markdown(c):
    rows = [f"| {label} | {c[label]['rps']:,.0f} | {c[label]['p50_ms']:.2f} | "
            f"{c[label]['p99_ms']:.2f} | "
            + (f"{c[label]['hit_ratio']:.2f}" if c[label]["hit_ratio"] is not None else "—") + " |"
            for label in ("uncached", "cached")]
    return "\n".join([
        f"## Result cache on a Zipf query stream (learned default, `{c['config']}`)", "",
        f"{c['distinct_texts']} distinct MMLU-Pro questions drawn with P(rank) ∝ 1/rank^"
        f"{c['zipf_exponent']}; `server.cache.entries` {c['cache_entries']}; wrk, "
        f"{c['connections']} connections, `POST /mcp/tools/call`; {c['warmup_seconds']} s warm-up "
        f"then {c['seconds']} s measured, {c['rounds']} rounds alternating the two servers "
        "(median by req/s; all rounds: " + json.dumps(c["all_rps"]) + ").", "",
        "| server | req/s | p50 ms | p99 ms | hit ratio |", "|---|---:|---:|---:|---:|", *rows, "",
        f"cached ÷ uncached: **{c['speedup_rps']:.1f}×** req/s, p50 "
        f"{c['speedup_p50']:.1f}× lower.", ""])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "mcpclass"))
    p.add_argument("--config", default=os.path.join(ROOT, "models", "mmlu14.yaml"))
    p.add_argument("--distinct", type=int, default=2000)
    p.add_argument("--exponent", type=float, default=1.0)
    p.add_argument("--entries", type=int, default=500)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", help="also write the figures here")
    a = p.parse_args()
    result = run(a.cli, a.config, a.distinct, a.exponent, a.entries, a.connections, a.seconds,
                 a.warmup, a.rounds, log=lambda *m: print("bench:", *m, file=sys.stderr))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    print(markdown(result))


if __name__ == "__main__":
    main()
