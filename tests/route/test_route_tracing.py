"""Trace context through `mcpclass route` (issue 34, part 5; docs/tracing.md): a W3C traceparent
on the client's request reaches the upstream with the same trace id and the route's upstream-call
span as its parent; a malformed one starts a new trace; the spans of the request, its
classification and its upstream call (and of the front's POST /classify) go to an OTLP/HTTP
collector (tests/tracing/otlp_receiver.mjs
decodes them with the official OTLP protobuf definitions) sharing that trace id, their parent
links right; a dead or silent collector costs requests nothing but counted drops."""

import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from test_route import Route, ask, models_yaml, upstream  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
TRACING = os.path.join(HERE, "..", "tracing")
ROOT = os.path.join(HERE, "..", "..")

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
CLASSIFY_TRACE = "5c0a55c0a55c0a55c0a55c0a55c0a55c"
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def node_binary():
    found = subprocess.run([os.path.join(ROOT, "scripts", "node-for-tests.sh")],
                           capture_output=True, text=True).stdout.strip()
    if not found:
        pytest.skip("no Node.js 20 for the OTLP receiver")
    if not os.path.isfile(os.path.join(TRACING, "node_modules", "@opentelemetry",
                                       "otlp-proto-exporter-base", "package.json")):
        subprocess.run(f"flock {os.environ.get('TMPDIR', '/tmp')}/mcpclass-npm-ci-tracing.lock "
                       "npm ci --no-audit --no-fund --loglevel=error",
                       shell=True, cwd=TRACING, check=True)
    return os.path.join(found, "node")


@pytest.fixture
def collector():
    proc = subprocess.Popen([node_binary(), os.path.join(TRACING, "otlp_receiver.mjs")],
                            stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())

    def get(path):
        import http.client
        import json
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", path)
        out = json.loads(c.getresponse().read())
        c.close()
        return out

    get.url = f"http://127.0.0.1:{port}/v1/traces"
    yield get
    proc.terminate()
    proc.wait(timeout=10)


def telemetry(endpoint, **otlp):
    keys = "".join(f", {k}: {v}" for k, v in otlp.items())
    return f'telemetry:\n  otlp: {{endpoint: "{endpoint}"{keys}}}\n'


def metric(route, name):
    _, text = route.get("/metrics")
    m = re.search(rf"^{name} (\d+)$", text.decode(), re.M)
    return int(m.group(1)) if m else None


def test_one_trace_id_from_the_client_through_route_to_the_upstream(tmp_path, upstream,
                                                                     collector):
    r = Route(tmp_path, models_yaml(upstream.url),
              extra=telemetry(collector.url, interval=0.1))
    try:
        status, _, _ = r.post(ask("what is the integral of x squared"),
                              {"traceparent": f"00-{TRACE}-{PARENT}-01",
                               "tracestate": "vendor=value"})
        assert status == 200
        # Not sampled: passed on, not exported.
        unsampled = "0af7651916cd43dd8448eb211c80319c"
        assert r.post(ask("integral"), {"traceparent": f"00-{unsampled}-b7ad6b7169203331-00"})[0] \
            == 200
        # Malformed (upper case, an all-zero id, version ff, 00 with more fields): a new trace.
        for bad in [f"00-{TRACE.upper()}-{PARENT}-01", f"00-{'0' * 32}-{PARENT}-01",
                    f"00-{TRACE}-{'0' * 16}-01", f"ff-{TRACE}-{PARENT}-01",
                    f"00-{TRACE}-{PARENT}-01-extra", "garbage"]:
            assert r.post(ask("integral"), {"traceparent": bad})[0] == 200, bad
        # The HTTP front's POST /classify (http_classify) takes part in the caller's trace too.
        c = r.conn()
        c.request("POST", "/classify", body=json.dumps({"inputs": "integral of x"}),
                  headers={"Content-Type": "application/json",
                           "traceparent": f"00-{CLASSIFY_TRACE}-{PARENT}-01"})
        assert c.getresponse().status == 200
        c.close()
        # The upstream closes without answering: a 502, and a log line with the trace id.
        failing = "11111111111111111111111111111111"
        assert r.post(ask("integral", fake={"close": True}),
                      {"traceparent": f"00-{failing}-{PARENT}-01"})[0] == 502
    finally:
        assert r.stop() == 0  # flushes the spans still queued
    log = r.proc.stderr.read()
    assert re.search(rf"trace={failing} /v1/chat/completions upstream 'm-openai' failed", log), log

    records = upstream.records()
    sent = [TRACEPARENT.match(rec["headers"]["traceparent"]).groups() for rec in records]
    assert sent[0][0] == TRACE and sent[0][1] != PARENT and sent[0][2] == "01"
    assert records[0]["headers"]["tracestate"] == "vendor=value"
    assert sent[1][0] == unsampled and sent[1][2] == "00"
    fresh = [trace for trace, _, _ in sent[2:8]]
    assert TRACE not in fresh and len(set(fresh)) == 6, fresh
    assert "tracestate" not in records[2]["headers"]

    assert collector("/errors") == []
    spans = collector("/spans")
    assert not [s for s in spans if s["traceId"] == unsampled]
    ours = {s["name"]: s for s in spans if s["traceId"] == TRACE}
    assert set(ours) == {"route /v1/chat/completions", "classify", "upstream m-openai"}, spans
    request, classify, call = (ours["route /v1/chat/completions"], ours["classify"],
                               ours["upstream m-openai"])
    assert request["parentSpanId"] == PARENT and request["kind"] == 2  # SERVER
    assert classify["parentSpanId"] == request["spanId"] and classify["kind"] == 1  # INTERNAL
    assert call["parentSpanId"] == request["spanId"] and call["kind"] == 3  # CLIENT
    assert call["spanId"] == sent[0][1]  # the upstream's parent is the call's span
    assert request["attributes"]["mcpclass.model"] == "m-openai"
    assert classify["attributes"]["mcpclass.category"] == "math"
    assert call["attributes"]["http.response.status_code"] == "200"
    assert all(s["traceState"] == "vendor=value" for s in ours.values())
    assert all(int(s["start"]) <= int(s["end"]) for s in ours.values())
    assert request["resource"]["service.name"] == "mcpclass"
    assert request["scope"]["name"] == "mcpclass"
    # The failed call is an error span of its own trace.
    failed = [s for s in spans if s["traceId"] == failing and s["name"] == "upstream m-openai"]
    assert len(failed) == 1 and failed[0]["status"] == 2, failed  # STATUS_CODE_ERROR
    classified = {s["name"]: s for s in spans if s["traceId"] == CLASSIFY_TRACE}
    assert set(classified) == {"POST /classify", "classify"}, spans
    assert classified["POST /classify"]["parentSpanId"] == PARENT
    assert classified["classify"]["parentSpanId"] == classified["POST /classify"]["spanId"]
    assert classified["classify"]["attributes"]["mcpclass.classifier"] == "rules"
    # Every trace the upstream saw that was sampled has its request span.
    exported = {s["traceId"] for s in spans if s["name"] == "route /v1/chat/completions"}
    assert set(fresh) <= exported


def test_a_dead_or_silent_collector_costs_only_counted_drops(tmp_path, upstream):
    # Silent: accepts connections and never answers, so every export waits out its timeout.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        for port, name in [(silent.getsockname()[1], "silent"),
                           (closed.getsockname()[1], "closed")]:
            r = Route(tmp_path, models_yaml(upstream.url),
                      extra=telemetry(f"http://127.0.0.1:{port}/v1/traces", batch=2,
                                      max_spans=6, interval=0.05, timeout=1))
            try:
                # Answered as without an exporter (bench/route_proxy.py --tracing measures the
                # throughput).
                results = [r.post(ask(f"integral {i}"))[0] for i in range(30)]
                assert results == [200] * 30, (name, results)
                deadline = time.monotonic() + 5
                while True:
                    dropped = metric(r, "mcpclass_otlp_spans_dropped_total")
                    failed = metric(r, "mcpclass_otlp_spans_failed_total")
                    if failed or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                assert metric(r, "mcpclass_otlp_spans_exported_total") == 0, name
                assert failed > 0, (name, failed)
                if name == "silent":  # 90 spans against 6 places and a 1 s export
                    assert dropped > 0, (name, dropped)
            finally:
                assert r.stop() == 0
    finally:
        silent.close()
        closed.close()
