#!/usr/bin/env python3
"""Where a request's CPU goes over HTTP (issue 16, "profile first"): serves mcpclass (POST /mcp
over a session, answered as JSON, and the router dialect's POST /mcp/tools/call) and the bare
Beast server (bench/bare_beast.cpp: the same acceptor, threads and fixed answer bytes), drives
each with wrk at C keep-alive connections and samples the server with `perf record` meanwhile.

Reports, per target, the server's CPU time per request (utime + stime of the whole process from
/proc, divided by the requests answered) split by shared object with perf's sample shares, and
the top symbols by self time. The split says what the gap to bare Beast is made of: kernel
(sockets, wake-ups), the allocator (libc), Boost.JSON, or mcpclass's own code. Self time only:
the Release build has no frame pointers, so call graphs would be guesses.

usage: bench/profile_http.py --cli BUILD/mcpclass --bare-beast BUILD/bench/bare_beast
       --json OUT.json [--seconds 5] [--connections 50] [--frequency 999] [--rounds 3]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import procs, wrk  # noqa: E402

TEXT = "What is the integral of x^2 from 0 to 3?"
# Shared objects grouped the way the gap is discussed; everything else is "other".
GROUPS = [("kernel", re.compile(r"^\[kernel")), ("libc (malloc, memcpy, locks)", re.compile(r"^libc\.")),
          ("libstdc++", re.compile(r"^libstdc\+\+")), ("Boost.JSON", re.compile(r"^libboost_json")),
          ("RE2", re.compile(r"^libre2")), ("server binary", re.compile(r"^(mcpclass|bare_beast)$"))]


def perf_shares(data, sort):
    """[(percent, name)] from `perf report --sort SORT` of a recording, self time."""
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "--stdio",
                          "-g", "none"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9.]+)%\s+(?:\[[.k]\]\s+)?(.+?)\s*$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2)))
    return rows


def profile(server, url, script, a):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        before = procs.cpu_seconds(server.pid)
        perf = subprocess.Popen(["perf", "record", "-q", "-F", str(a.frequency), "-o", data, "-p",
                                 str(server.pid), "--", "sleep", str(a.seconds)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        r = wrk.run(url, script, a.connections, a.seconds)
        perf.wait(timeout=a.seconds + 60)
        cpu = procs.cpu_seconds(server.pid) - before
        if perf.returncode != 0:
            raise RuntimeError(f"perf record failed: {perf.stderr.read().decode()[:500]}")
        dsos = perf_shares(data, "dso")
        symbols = perf_shares(data, "sym")[:a.top]
    if r["bad_answers"] or r["non_2xx"] or r["socket_errors"]:
        raise RuntimeError(f"{url}: bad answers during the profile: {r}")
    us_per_request = 1e6 * cpu / r["requests"]
    groups = {name: 0.0 for name, _ in GROUPS}
    groups["other"] = 0.0
    for pct, dso in dsos:
        name = next((g for g, pattern in GROUPS if pattern.search(dso)), "other")
        groups[name] += pct
    return {"rps": r["rps"], "requests": r["requests"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
            "cpu_seconds": cpu, "cpu_us_per_request": us_per_request,
            "groups_us_per_request": {g: us_per_request * pct / 100 for g, pct in groups.items()},
            "dso_percent": [{"dso": d, "percent": p} for p, d in dsos[:12]],
            "top_symbols": [{"symbol": s[:140], "percent": p} for p, s in symbols]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--bare-beast", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--frequency", type=int, default=999)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    runs = {}
    mc = procs.Server([a.cli, "serve", "--http", "127.0.0.1:0"])
    beast = None
    answer_path = None
    try:
        sid = procs.open_session(mc.port)
        headers = {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sid,
                   "MCP-Protocol-Version": procs.PROTOCOL_VERSION}
        body = json.dumps(procs.tools_call(0, TEXT), separators=(",", ":")).replace('"id":0', '"id":@ID@')
        status, _, answer = procs.http_request(mc.port, "POST", "/mcp", body.replace("@ID@", "1"), headers)
        if status != 200 or '"class"' not in answer:
            raise RuntimeError(f"mcpclass answers {status} {answer[:300]}")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(answer)
            answer_path = f.name
        beast = procs.Server([a.bare_beast, "--body-file", answer_path],
                             ready=r"listening on http://127\.0\.0\.1:(\d+)")
        url = f"http://127.0.0.1:{mc.port}"
        rest = json.dumps({"name": "classify_text", "arguments": {"text": TEXT}}, separators=(",", ":"))
        targets = [("mcpclass_json", mc, url + "/mcp", wrk.lua_script(headers, body, "@ID@")),
                   ("mcpclass_router", mc, url + "/mcp/tools/call",
                    wrk.lua_script({}, rest, None, '"class"')),
                   ("bare_beast", beast, f"http://127.0.0.1:{beast.port}/mcp",
                    wrk.lua_script({}, body, "@ID@"))]
        # Rounds over all targets, so a burst of load from elsewhere on a shared machine hits one
        # round of each; each target's figure is its round with the median CPU per request.
        for _ in range(a.rounds):
            for key, server, target_url, script in targets:
                runs.setdefault(key, []).append(profile(server, target_url, script, a))
    finally:
        mc.stop()
        if beast:
            beast.stop()
        if answer_path:
            os.unlink(answer_path)
    results = {}
    for key, rs in runs.items():
        rs.sort(key=lambda r: r["cpu_us_per_request"])
        results[key] = dict(rs[len(rs) // 2],
                            cpu_us_per_request_rounds=[r["cpu_us_per_request"] for r in rs])
    version = subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout.strip()
    out = {"connections": a.connections, "seconds": a.seconds, "rounds": a.rounds,
           "frequency_hz": a.frequency,
           "perf": version, "text": TEXT, "targets": results}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    for key, r in results.items():
        groups = ", ".join(f"{g} {v:.1f}" for g, v in r["groups_us_per_request"].items())
        print(f"{key}: {r['rps']:.0f} req/s, {r['cpu_us_per_request']:.1f} µs CPU/request ({groups})",
              file=sys.stderr)


if __name__ == "__main__":
    main()
