"""In-process classify latency from Python, and an MCP-over-HTTP round trip (tools/call
classify_text on a keep-alive connection) on the same machine; medians of many calls."""

import http.client
import json
import statistics
import sys
import time

import mcpclass

TEXT = "What is the derivative of x squared?"


def median_us(fn, n):
    for _ in range(min(1000, n)):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t) / 1e3)
    samples.sort()
    return statistics.median(samples), samples[len(samples) * 99 // 100]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with mcpclass.Classifier() as c:
        med, p99 = median_us(lambda: c.classify(TEXT), n)
        print(f"Python  in-process classify: median {med:.1f} us, p99 {p99:.1f} us ({n} calls)")

    with mcpclass.Server() as s:
        port = s.start_http("127.0.0.1", 0)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        conn.request("POST", "/mcp", json.dumps({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}}), headers)
        resp = conn.getresponse()
        resp.read()
        headers["Mcp-Session-Id"] = resp.getheader("Mcp-Session-Id")
        headers["MCP-Protocol-Version"] = "2025-06-18"
        conn.request("POST", "/mcp", json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}), headers)
        conn.getresponse().read()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "classify_text", "arguments": {"text": TEXT}}})

        def round_trip():
            conn.request("POST", "/mcp", body, headers)
            r = conn.getresponse()
            data = r.read()
            assert r.status == 200, (r.status, data)

        m = max(n // 10, 100)
        med, p99 = median_us(round_trip, m)
        print(f"HTTP    MCP round trip (Python client, keep-alive): median {med:.1f} us, "
              f"p99 {p99:.1f} us ({m} calls)")


if __name__ == "__main__":
    main()
