#!/usr/bin/env python3
"""Footprint of the `mcpclass serve --stdio` process and the bench report (bench/run.sh).

Start-to-first-response: wall time from spawning the server to reading its tools/call answer,
median of 15 runs, against `cat` spawned on the same input (the cost of any process at all).
RSS: VmRSS of the server after initialize, and after 10,000 tools/call requests over its stdio.
"""
import argparse, json, os, platform, statistics, subprocess, time, datetime

TEXT = "Can you help me solve this integral and explain the derivative of x^2 * sin(x) step by step?"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(i):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "classify_text", "arguments": {"text": TEXT}}}


def line(m):
    return (json.dumps(m) + "\n").encode()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return -1


def first_response(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(line(INIT) + line(INITIALIZED) + line(call(1)))
    p.stdin.flush()
    lines = 0
    while lines < 2:  # initialize result, then the tools/call result
        if not p.stdout.readline():
            break
        lines += 1
    elapsed = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return elapsed * 1000.0


def footprint(cli):
    p = subprocess.Popen([cli, "serve", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    p.stdin.write(line(INIT) + line(INITIALIZED))
    p.stdin.flush()
    p.stdout.readline()
    time.sleep(0.2)
    idle = rss_kib(p.pid)
    for chunk in range(100):
        batch = b"".join(line(call(chunk * 100 + i + 1)) for i in range(100))
        p.stdin.write(batch)
        p.stdin.flush()
        for _ in range(100):
            p.stdout.readline()
    loaded = rss_kib(p.pid)
    p.stdin.close()
    p.wait()
    return idle, loaded


def main():
    ap = argparse.ArgumentParser()
    for a in ("inprocess", "cli", "bench-binary", "library", "json", "markdown"):
        ap.add_argument("--" + a, required=a != "cli", default="")
    args = ap.parse_args()
    with open(args.inprocess) as f:
        inproc = json.load(f)

    runs = 15
    if args.cli:
        server_ms = statistics.median(first_response([args.cli, "serve", "--stdio"]) for _ in range(runs))
        cat_ms = statistics.median(first_response(["cat"]) for _ in range(runs))
        idle, loaded = footprint(args.cli)
    else:  # the CLI did not build: no process-level figures
        server_ms = cat_ms = float("nan")
        idle = loaded = -1
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
        "build": "Release, keyword-only (MCPCLASS_WITH_TORCH=OFF)",
        "inprocess": inproc,
        "cli_stdio": {
            "start_to_first_response_ms_median": server_ms,
            "cat_same_input_ms_median": cat_ms,
            "start_to_first_response_vs_cat": server_ms / cat_ms if cat_ms == cat_ms else None,
            "rss_kib_idle": idle,
            "rss_kib_after_10k_requests": loaded,
            "rss_growth_ratio": loaded / idle if idle > 0 else float("nan"),
        },
        "binary_bytes": {
            "mcpclass_cli": os.path.getsize(args.cli) if args.cli else None,
            "mcpclass_bench": os.path.getsize(args.bench_binary),
            "libmcpclass_core_a": os.path.getsize(args.library),
        },
    }
    def no_nan(v):  # JSON has no NaN: figures that could not be measured are null
        if isinstance(v, dict):
            return {k: no_nan(x) for k, x in v.items()}
        if isinstance(v, list):
            return [no_nan(x) for x in v]
        return None if isinstance(v, float) and v != v else v

    with open(args.json, "w") as f:
        json.dump(no_nan(report), f, indent=2)

    md = [f"# mcpclass benchmark report", "",
          f"{report['date']} · {report['machine']} · {report['build']} · `bench/run.sh`", "",
          "## In-process (per call; ratios against baselines on the same "
          f"{inproc['request_bytes']}-byte tools/call request, same run)", "",
          "| case | median ns | p99 ns | allocations/call | median ÷ memcpy | median ÷ JSON parse+serialize |",
          "|---|---:|---:|---:|---:|---:|"]
    for c in inproc["cases"]:
        md.append(f"| {c['name']} | {c['median_ns']:.0f} | {c['p99_ns']:.0f} | "
                  f"{c['allocations_per_call']:.1f} | {c['median_vs_memcpy']:.1f} | "
                  f"{c['median_vs_json_parse_serialize']:.2f} |")
    cs = report["cli_stdio"]
    md += ["", "`session_tools_call` = Session::handle of a `tools/call classify_text` text: JSON-RPC "
           "parse, dispatch, rule classify, result serialization (inline executor). memcpy and "
           "steady_clock overhead bound the baselines from below.", "",
           "## Footprint", "",
           "| figure | value |", "|---|---:|",
           f"| in-process RSS after setup (KiB) | {inproc['rss_kib_after_setup']} |",
           f"| in-process RSS after all timed calls + 10k requests (KiB) | {inproc['rss_kib_after_10k_requests']} |",
           f"| in-process main() to first tools/call response (ms) | {inproc['main_to_first_response_ms']:.2f} |",
           f"| `mcpclass serve --stdio` RSS idle (KiB) | {cs['rss_kib_idle']} |",
           f"| `mcpclass serve --stdio` RSS after 10k requests (KiB) | {cs['rss_kib_after_10k_requests']} |",
           f"| RSS growth after 10k requests (×) | {cs['rss_growth_ratio']:.3f} |",
           f"| spawn → first tools/call answer, median of {runs} (ms) | {cs['start_to_first_response_ms_median']:.2f} |",
           f"| same for `cat` on the same input (ms) | {cs['cat_same_input_ms_median']:.2f} |",
           f"| start-to-first-response ÷ cat | {server_ms / cat_ms:.1f} |",
           f"| `mcpclass` CLI binary (bytes) | {report['binary_bytes']['mcpclass_cli']} |",
           f"| libmcpclass_core.a (bytes) | {report['binary_bytes']['libmcpclass_core_a']} |",
           f"| mcpclass_bench binary (bytes) | {report['binary_bytes']['mcpclass_bench']} |", ""]
    with open(args.markdown, "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
