"""Overload (issue 34, part 4): a real `mcpclass serve` on 127.0.0.1 whose classifier is a remote
one behind a slow peer (tests/client/fake_classifier_server.py, FAKE_MODE=slow: one call at a
time, 50 ms each, so 20 classifications a second), offered four times that for 10 s under
`server.admission`. Every request is answered within its deadline or refused at once with 503
and Retry-After; nothing is answered after its deadline; the admission metrics match what the
clients saw. Run by ctest (overload.process) with MCPCLASS_BIN set; standard library only."""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")
FAKE = os.path.join(ROOT, "tests", "client", "fake_classifier_server.py")
DELAY_MS = 50                      # the peer's time per call, one call at a time
CAPACITY = 1000 / DELAY_MS         # classifications a second
RATE = 4 * CAPACITY                # offered
SECONDS = 10
SHORT_MS, LONG_MS = 150, 800       # deadlines: every third request has the short one
# What a client on this machine adds to the server's time: connect, parse, a busy scheduler.
SLACK_MS = 60
AT_ONCE_MS = 100                   # a refusal for want of a place is this quick, plus SLACK_MS


def write_config(tmp_path):
    document = json.loads(subprocess.run([BIN, "config"], check=True, capture_output=True,
                                         text=True).stdout)
    document["classifier"] = {"kind": "remote", "remote": {
        "transport": "stdio", "command": ["/usr/bin/python3", FAKE],
        "env": {"FAKE_MODE": "slow", "FAKE_DELAY_MS": str(DELAY_MS)},
        "timeout": 10, "max_retries": 0}}
    document["server"]["admission"] = {"max_concurrent": 1, "max_queue": 4, "retry_after": 2}
    cfg = tmp_path / "overload.json"
    cfg.write_text(json.dumps(document))
    return cfg


def serve(tmp_path):
    cfg = write_config(tmp_path)
    return procs.Server([BIN, "serve", "--http", "127.0.0.1:0", "--config", str(cfg)],
                        ready=r"on http://127\.0\.0\.1:(\d+)/mcp")


def call(port, i, deadline_ms):
    """One classification, through the REST dialect with the header or Streamable HTTP with the
    `_meta` key: (status, headers, body, elapsed ms)."""
    text = f"What is the integral of x^{i} from 0 to 3?"
    if i % 2 == 0:
        path, body = "/mcp/tools/call", {"name": "classify_text", "arguments": {"text": text}}
        headers = {"X-Request-Timeout-Ms": str(deadline_ms)}
    else:
        path = "/mcp"
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "classify_text", "arguments": {"text": text},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "io.mcpclass/timeoutMs": deadline_ms}}}
        headers = {"Accept": procs.MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28"}
    t0 = time.monotonic()
    status, response_headers, text = procs.http_request(port, "POST", path, body, headers,
                                                        timeout=30)
    return status, response_headers, text, (time.monotonic() - t0) * 1000


def refusal_reason(text):
    doc = json.loads(text)
    return doc["error"]["data"]["reason"], doc["error"]["code"], doc["error"]["message"]


def metrics(port):
    _, _, body = procs.http_request(port, "GET", "/metrics")
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^(mcpclass_admission_\w+) (\S+)$", body, re.M)}


def test_four_times_capacity_is_answered_in_time_or_refused_at_once(tmp_path):
    server = serve(tmp_path)
    try:
        port = server.port
        # The peer is up and the estimate of a run's time is set before the load.
        status, _, _, _ = call(port, 0, 10_000)
        assert status == 200
        total = int(RATE * SECONDS)
        results = [None] * total
        with concurrent.futures.ThreadPoolExecutor(max_workers=96) as pool:
            start = time.monotonic() + 0.2
            futures = {}
            for i in range(total):
                delay = start + i / RATE - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                deadline = SHORT_MS if i % 3 == 0 else LONG_MS
                futures[pool.submit(call, port, i + 1, deadline)] = (i, deadline)
            for f in concurrent.futures.as_completed(futures):
                i, deadline = futures[f]
                results[i] = (deadline, *f.result())

        answered = late = 0
        rejected, expired = [], []
        for deadline, status, headers, text, ms in results:
            assert status in (200, 503), (status, text)
            if status == 200:
                answered += 1
                doc = json.loads(text)
                payload = doc["result"] if "result" in doc else doc
                assert not payload.get("isError"), text
                if ms > deadline + SLACK_MS:
                    late += 1
                continue
            assert headers.get("retry-after") == "2", headers
            reason, code, message = refusal_reason(text)
            assert code == -32010, text
            assert "server.admission: 1 running and 4 queued" in message, message
            (rejected if reason == "rejected" else expired).append((deadline, ms))
        assert late == 0, f"{late} answers came after their deadline"
        # Refused for want of a place: at once. Dropped for the deadline: by the deadline.
        slow_refusals = [ms for _, ms in rejected if ms > AT_ONCE_MS + SLACK_MS]
        assert slow_refusals == [], slow_refusals[:10]
        late_expiries = [(d, ms) for d, ms in expired if ms > d + SLACK_MS]
        assert late_expiries == [], late_expiries[:10]
        # The load was more than the classifier could take, and it still classified.
        assert rejected and answered >= 50, (answered, len(rejected), len(expired))

        m = metrics(port)
        assert m["mcpclass_admission_offered_total"] == total + 1
        assert m["mcpclass_admission_classified_total"] == answered + 1
        assert m["mcpclass_admission_rejected_total"] == len(rejected)
        assert m["mcpclass_admission_expired_total"] == len(expired)
        assert abs(m["mcpclass_admission_classified_ratio"] - (answered + 1) / (total + 1)) < 1e-4
        assert m["mcpclass_admission_running"] == 0 and m["mcpclass_admission_queued"] == 0
        print(f"\n{total} offered in {SECONDS} s: {answered} classified, {len(rejected)} "
              f"rejected, {len(expired)} expired")
    finally:
        assert server.stop() == 0


def test_bad_deadlines_are_named(tmp_path):
    server = serve(tmp_path)
    try:
        status, _, text = procs.http_request(
            server.port, "POST", "/mcp/tools/call",
            {"name": "classify_text", "arguments": {"text": "x"}},
            {"X-Request-Timeout-Ms": "soon"})
        assert status == 400 and "X-Request-Timeout-Ms must be a whole number" in text, text
        status, _, text = procs.http_request(
            server.port, "POST", "/mcp/tools/call",
            {"name": "classify_text", "arguments": {"text": "x"},
             "_meta": {"io.mcpclass/timeoutMs": "soon"}})
        assert status == 400 and 'io.mcpclass/timeoutMs' in text, text
        # /classify refuses it the same way (it ignored it before: the deadline was lost).
        status, _, text = procs.http_request(server.port, "POST", "/classify", {"inputs": "x"},
                                             {"X-Request-Timeout-Ms": "soon"})
        assert status == 400 and "X-Request-Timeout-Ms must be a whole number" in text, text
        # Already due: refused as expired, never run.
        status, headers, text = procs.http_request(
            server.port, "POST", "/mcp/tools/call",
            {"name": "classify_text", "arguments": {"text": "x"}},
            {"X-Request-Timeout-Ms": "0"})
        assert status == 503 and refusal_reason(text)[0] == "expired", text
        assert metrics(server.port)["mcpclass_admission_classified_total"] == 0
    finally:
        assert server.stop() == 0


def test_stdio_refuses_with_a_json_rpc_error(tmp_path):
    """Over stdio there is no status line: the refusal is JSON-RPC error -32010, at once."""
    proc = subprocess.Popen([BIN, "serve", "--stdio", "--config", str(write_config(tmp_path))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        proc.stdin.write(json.dumps(procs.initialize_request(0)) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
                         + "\n")
        # One running, four queued (50 ms each at the peer), the rest refused as they arrive.
        for rid in range(1, 11):
            proc.stdin.write(json.dumps(procs.tools_call(rid, f"integral {rid}")) + "\n")
        proc.stdin.flush()
        answers = {}
        while len(answers) < 11:
            message = json.loads(proc.stdout.readline())
            if "id" in message:
                answers[message["id"]] = message
        refused = [m for m in answers.values() if "error" in m]
        assert len(refused) >= 5, answers
        for m in refused:
            assert m["error"]["code"] == -32010, m
            assert m["error"]["data"] == {"reason": "rejected", "retryAfterMs": 2000,
                                          "maxConcurrent": 1, "maxQueue": 4}, m
        assert all("result" in answers[rid] for rid in range(1, 6)), answers
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_http_classify_takes_places_in_the_same_gate(tmp_path):
    """POST /classify runs beside the MCP engine: it takes its places in server.admission too,
    refusing at once with 503 and Retry-After, and a deadline already passed is never run."""
    server = serve(tmp_path)
    try:
        def post(i, headers=None):
            t0 = time.monotonic()
            status, h, text = procs.http_request(
                server.port, "POST", "/classify", {"inputs": f"What is {i} squared?"},
                headers or {}, timeout=30)
            return status, h, text, (time.monotonic() - t0) * 1000

        assert post(0)[0] == 200  # the peer is up
        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            answers = list(pool.map(post, range(1, 13)))
        refused = [a for a in answers if a[0] != 200]
        assert refused and len(refused) <= 12 - 5, [a[:3] for a in answers]
        for status, headers, text, ms in refused:
            assert status == 503 and headers.get("retry-after") == "2", (status, headers, text)
            body = json.loads(text)
            assert body["error_type"] == "overloaded", body
            assert "1 running and 4 queued" in body["error"], body
            assert ms < AT_ONCE_MS + SLACK_MS + 400, ms  # not after waiting for a place
        for status, _, text, _ in answers:
            if status == 200:
                scores = json.loads(text)
                assert len(scores) >= 2 and all({"label", "score"} <= set(x) for x in scores)

        status, headers, text, _ = post(99, {"X-Request-Timeout-Ms": "0"})
        assert status == 503 and json.loads(text)["error_type"] == "deadline_exceeded", text
        counts = metrics(server.port)
        assert counts["mcpclass_admission_offered_total"] == 14, counts
        assert counts["mcpclass_admission_rejected_total"] == len(refused), counts
        assert counts["mcpclass_admission_expired_total"] == 1, counts
    finally:
        assert server.stop() == 0


def test_span_calls_take_places_in_the_same_gate(tmp_path):
    """Issue 47, item 9: POST /classify/spans and the MCP span tool run a model as classify_text
    does; they take their places in server.admission too (they were never offered to it: with
    one place and no queue, twelve concurrent span calls all ran). The span tool is a remote one
    behind a slow peer (100 ms a text, one at a time)."""
    document = json.loads(subprocess.run([BIN, "config"], check=True, capture_output=True,
                                         text=True).stdout)
    document["token_classifier"] = {"remote": {
        "transport": "stdio", "command": ["/usr/bin/python3", FAKE],
        "env": {"FAKE_MODE": "slow", "FAKE_DELAY_MS": "100"}, "timeout": 30}}
    document["server"]["admission"] = {"max_concurrent": 1, "max_queue": 0, "retry_after": 2}
    cfg = tmp_path / "spans.json"
    cfg.write_text(json.dumps(document))
    server = procs.Server([BIN, "serve", "--http", "127.0.0.1:0", "--config", str(cfg)],
                          ready=r"on http://127\.0\.0\.1:(\d+)/mcp")
    try:
        texts = [f"Zoë wrote note {i}" for i in range(8)]

        def spans_call(i):
            t0 = time.monotonic()
            status, h, text = procs.http_request(server.port, "POST", "/classify/spans",
                                                 {"inputs": texts}, timeout=60)
            return status, h, text, (time.monotonic() - t0) * 1000

        def tool_call(i):
            t0 = time.monotonic()
            status, h, text = procs.http_request(
                server.port, "POST", "/mcp/tools/call",
                {"name": "detect_pii", "arguments": {"text": f"Zoë called {i}"}}, timeout=60)
            return status, h, text, (time.monotonic() - t0) * 1000

        status, _, text, _ = spans_call(0)  # the peer is up
        assert status == 200 and json.loads(text)[0][0]["word"] == "Zoë", text

        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            over_http = list(pool.map(spans_call, range(12)))
        with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
            over_mcp = list(pool.map(tool_call, range(12)))

        http_refused = [a for a in over_http if a[0] != 200]
        assert http_refused and len(http_refused) < 12, [a[:3] for a in over_http]
        for status, headers, text, ms in http_refused:
            assert status == 503 and headers.get("retry-after") == "2", (status, headers, text)
            body = json.loads(text)
            assert body["error_type"] == "overloaded", body
            assert "1 running and 0 queued" in body["error"], body
            assert ms < AT_ONCE_MS + SLACK_MS + 400, ms  # not after waiting for a place
        for status, _, text, _ in over_http:
            if status == 200:
                assert [s[0]["word"] for s in json.loads(text)] == ["Zoë"] * len(texts), text

        mcp_refused = [a for a in over_mcp if a[0] != 200]
        assert mcp_refused and len(mcp_refused) < 12, [a[:3] for a in over_mcp]
        for status, headers, text, _ in mcp_refused:
            assert status == 503 and headers.get("retry-after") == "2", (status, headers, text)
            reason, code, message = refusal_reason(text)
            assert (reason, code) == ("rejected", -32010), text
            assert "server.admission: 1 running and 0 queued" in message, message

        # A deadline already due: never run.
        status, _, text = procs.http_request(server.port, "POST", "/classify/spans",
                                             {"inputs": "Zoë"}, {"X-Request-Timeout-Ms": "0"})
        assert status == 503 and json.loads(text)["error_type"] == "deadline_exceeded", text

        refused = len(http_refused) + len(mcp_refused)
        counts = metrics(server.port)
        assert counts["mcpclass_admission_offered_total"] == 1 + 24 + 1, counts
        assert counts["mcpclass_admission_rejected_total"] == refused, counts
        assert counts["mcpclass_admission_expired_total"] == 1, counts
        assert counts["mcpclass_admission_classified_total"] == 1 + 24 - refused, counts
    finally:
        assert server.stop() == 0
