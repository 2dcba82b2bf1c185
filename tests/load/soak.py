#!/usr/bin/env python3
"""Load and soak of `mcpclass serve --http` (issue 8, Robustness 3). Real process, real sockets.

Phase 1, load: N open SSE streams (GET /mcp on N sessions) while wrk drives C keep-alive
connections of classify_text for S seconds after a warm-up: C/2 with JSON-RPC tools/call on one
session, C/2 on the router dialect POST /mcp/tools/call (a throwaway session per call). Asserts:
zero non-2xx, zero socket errors, every answer a classification, every SSE stream still open at
the end, RSS growth between the end of the warm-up and the end < 5%.
Phase 2, abandoned sessions: M sessions opened (initialize + initialized) and never used again,
twice. Asserts: the session gauge returns to 0 after idle eviction (a short session_idle_timeout
set through the config document); the heap in use (GET /metrics, glibc mallinfo2) returns to its
baseline (at most 10% of the growth, + 256 KiB, left); the second round leaves no more RSS than the
first (+5%). RSS itself does not return to the baseline: glibc keeps freed pages in its arenas for
reuse, which is what the second round shows.

  tests/load/soak.py --bin build/mcpclass                     # full: 60 s, 100 + 100, 10,000
  tests/load/soak.py --bin build/mcpclass --seconds 10 --sessions 1000   # CI-sized (ctest load.soak)
"""
import argparse
import http.client
import json
import os
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs, wrk  # noqa: E402

TEXT = "What is the integral of x^2 from 0 to 3?"
failures = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message, flush=True)
    if not ok:
        failures.append(message)


class SseStream:
    """GET /mcp on a session, kept open; `open()` says whether the server still holds it."""

    def __init__(self, port, sid):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                           f"Accept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n"
                           f"MCP-Protocol-Version: {procs.PROTOCOL_VERSION}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("SSE stream closed before its head")
            head += chunk
        self.status = int(head.split(b" ", 2)[1])
        self.sock.setblocking(False)

    def open(self):
        try:
            while True:
                data = self.sock.recv(65536)  # drain whatever the server sent (keep-alives)
                if not data:
                    return False
        except BlockingIOError:
            return True
        except OSError:
            return False

    def close(self):
        self.sock.close()


def open_sessions(port, count, workers=8):
    """`count` sessions over a few keep-alive connections; returns their ids."""
    def batch(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        ids = []
        for _ in range(n):
            conn.request("POST", "/mcp", json.dumps(procs.initialize_request()),
                         {"Content-Type": "application/json", "Accept": procs.MCP_ACCEPT})
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"initialize: {r.status}")
            sid = r.getheader("Mcp-Session-Id")
            conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                         {"Content-Type": "application/json", "Accept": procs.MCP_ACCEPT,
                          "Mcp-Session-Id": sid, "MCP-Protocol-Version": procs.PROTOCOL_VERSION})
            r = conn.getresponse()
            r.read()
            if r.status != 202:
                raise RuntimeError(f"initialized: {r.status}")
            ids.append(sid)
        conn.close()
        return ids

    sizes = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        return [sid for ids in pool.map(batch, sizes) for sid in ids]


def run_both(loads, connections, seconds):
    """Both wrk runs at once, `connections` each."""
    results = [None] * len(loads)

    def one(i):
        results[i] = wrk.run(loads[i][0], loads[i][1], connections, seconds)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(loads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if any(r is None for r in results):
        raise RuntimeError("a wrk run failed")
    return results


def settle_rss(server, seconds=1.0):
    time.sleep(seconds)
    return server.rss()


def phase_load(server, a):
    port = server.port
    stream_sids = [procs.open_session(port) for _ in range(a.streams)]
    streams = [SseStream(port, sid) for sid in stream_sids]
    check(all(s.status == 200 for s in streams), f"{a.streams} GET /mcp SSE streams opened (200)")
    check(procs.metric(port, "mcpclass_sse_streams") == a.streams,
          f"/metrics counts {a.streams} open SSE streams")

    sid = procs.open_session(port)
    headers = {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sid,
               "MCP-Protocol-Version": procs.PROTOCOL_VERSION}
    body = json.dumps(procs.tools_call(0, TEXT), separators=(",", ":")).replace('"id":0', '"id":@ID@', 1)
    rest = json.dumps({"name": "classify_text", "arguments": {"text": TEXT}})
    loads = [(f"http://127.0.0.1:{port}/mcp", wrk.lua_script(headers, body, "@ID@", '"class"')),
             (f"http://127.0.0.1:{port}/mcp/tools/call", wrk.lua_script({}, rest, None, '"class"'))]
    half = max(1, a.connections // 2)
    warm = run_both(loads, half, a.warmup)
    rss_warm = settle_rss(server)
    sampler = procs.RssSampler(server.pid, 0.5)
    main = run_both(loads, half, a.seconds)
    sampler.stop()
    rss_end = settle_rss(server)
    growth = (rss_end - rss_warm) / rss_warm
    print(f"     warm-up {sum(r['requests'] for r in warm)} requests; main "
          f"{sum(r['requests'] for r in main)} requests ({sum(r['rps'] for r in main):.0f}/s); "
          f"RSS warm {rss_warm} KiB, peak {sampler.peak} KiB, end {rss_end} KiB ({growth:+.1%})",
          flush=True)
    for name, runs in (("warm-up", warm), ("main run", main)):
        for r, what in zip(runs, ("JSON-RPC", "router dialect")):
            label = f"{name}, {what}"
            check(r["requests"] > 0 and r["non_2xx"] == 0,
                  f"{label}: {r['requests']} requests, {r['non_2xx']} non-2xx")
            check(r["socket_errors"] == 0, f"{label}: {r['socket_errors']} socket errors")
            check(r["bad_answers"] == 0, f"{label}: {r['bad_answers']} answers without a "
                                         f"classification {r['bad_sample']}")
    check(growth < 0.05, f"RSS growth {growth:+.2%} < 5% between warm-up and end")
    still = sum(s.open() for s in streams)
    check(still == a.streams, f"{still}/{a.streams} SSE streams still open after the load")
    check(procs.metric(port, "mcpclass_sse_streams") == a.streams, "/metrics still counts every SSE stream")
    for s in streams:
        s.close()
    check(procs.wait_until(lambda: procs.metric(port, "mcpclass_sse_streams") == 0, 10),
          "SSE stream gauge back to 0 once the clients closed them")
    return {"warmup": warm, "main": main, "rss_kib_warm": rss_warm, "rss_kib_end": rss_end,
            "rss_kib_peak": sampler.peak, "rss_growth": growth}


def phase_sessions(server, a):
    port = server.port
    ok = procs.wait_until(lambda: procs.metric(port, "mcpclass_active_sessions") == 0,
                          a.idle_timeout * 4 + 10)
    check(ok, "every session of the load phase evicted before the session phase")
    rss_base = settle_rss(server)
    heap_base = procs.metric(port, "mcpclass_heap_in_use_bytes")
    rounds = []
    for round_ in (1, 2):
        t0 = time.monotonic()
        sids = open_sessions(port, a.sessions)
        opened = time.monotonic() - t0
        count = procs.metric(port, "mcpclass_active_sessions")
        rss_peak = server.rss()
        heap_peak = procs.metric(port, "mcpclass_heap_in_use_bytes")
        check(len(set(sids)) == a.sessions and count == a.sessions,
              f"round {round_}: {a.sessions} sessions opened in {opened:.1f} s, gauge {count}")
        evicted = procs.wait_until(lambda: procs.metric(port, "mcpclass_active_sessions") == 0,
                                   a.idle_timeout * 4 + 30, 0.25)
        check(evicted, f"round {round_}: all abandoned sessions evicted after the idle timeout")
        rss_after = settle_rss(server, 2)
        heap_after = procs.metric(port, "mcpclass_heap_in_use_bytes")
        status, _, _ = procs.http_request(port, "POST", "/mcp", procs.tools_call(1, TEXT),
                                          {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sids[0]})
        check(status == 404, f"round {round_}: an evicted session id is unknown (404), got {status}")
        print(f"     round {round_}: heap in use {heap_base // 1024} KiB → {heap_peak // 1024} KiB "
              f"with sessions → {heap_after // 1024} KiB after eviction; RSS {rss_base} → "
              f"{rss_peak} → {rss_after} KiB", flush=True)
        left, grown = heap_after - heap_base, heap_peak - heap_base
        check(left <= 0.10 * grown + 256 * 1024,
              f"round {round_}: heap in use back to the baseline after eviction "
              f"({left // 1024:+} KiB of {grown // 1024:+} KiB grown left)")
        rounds.append({"rss_kib_with_sessions": rss_peak, "rss_kib_after_eviction": rss_after,
                       "heap_bytes_with_sessions": heap_peak, "heap_bytes_after_eviction": heap_after,
                       "open_seconds": opened})
    first, second = rounds
    reuse = second["rss_kib_after_eviction"] <= first["rss_kib_after_eviction"] * 1.05
    check(reuse, f"a second round leaves no more RSS: {second['rss_kib_after_eviction']} KiB vs "
                 f"{first['rss_kib_after_eviction']} KiB")
    return {"rss_kib_baseline": rss_base, "heap_bytes_baseline": heap_base, "rounds": rounds}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="the mcpclass binary")
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--warmup", type=int, default=0, help="default: a sixth of --seconds, >= 3")
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--streams", type=int, default=100)
    p.add_argument("--sessions", type=int, default=10000)
    p.add_argument("--idle-timeout", type=float, default=0,
                   help="session_idle_timeout, seconds (default: 2 + 1 per 1,000 sessions, so the "
                        "sessions all live until they are counted)")
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    a.warmup = a.warmup or max(3, a.seconds // 6)
    a.idle_timeout = a.idle_timeout or 2 + a.sessions / 1000
    cfg = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"server": {"http": {"session_idle_timeout": a.idle_timeout,
                                   "max_sessions": a.sessions + a.streams + 100,
                                   "max_sse_streams": a.streams + 10}}}, cfg)
    cfg.close()
    server = procs.Server([a.bin, "serve", "--http", "127.0.0.1:0", "--config", cfg.name],
                          ready=r"on http://127\.0\.0\.1:(\d+)/mcp")
    figures = {"params": {"command": "tests/load/soak.py " + " ".join(sys.argv[1:]),
                          "seconds": a.seconds, "connections": a.connections,
                          "streams": a.streams, "sessions": a.sessions}}
    try:
        figures["load"] = phase_load(server, a)
        figures["sessions"] = phase_sessions(server, a)
        check(server.alive(), "the server is still running")
        status, _, _ = procs.http_request(server.port, "GET", "/health")
        check(status == 200, "GET /health answers 200 at the end")
    finally:
        rc = server.stop()
        os.unlink(cfg.name)
    check(rc == 0, f"SIGTERM: the server drained and exited 0 (got {rc})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=2)
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        return 1
    print("soak: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
