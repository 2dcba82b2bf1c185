"""`mcpclass route` under a low descriptor limit (RLIMIT_NOFILE set in the child): the server's
accepted connections and the proxy's upstream sockets share one descriptor budget, so a routed
request that would need a descriptor the process does not have is refused with 503 in OpenAI's
format, before the upstream is tried: never a 502, never an upstream error, never a fallback
(docs/route.md, "Upstream connections"; docs/bad-input.md)."""

import json
import os
import re
import resource
import sys
import threading
import time

from fake_upstream import FakeUpstream

sys.path.insert(0, os.path.dirname(__file__))
from test_route import Route, ask, models_yaml, upstream  # noqa: E402,F401

NOFILE = 200   # the server resolves max_connections (and the budget) to 200 - 64 = 136
CLIENTS = 130  # more routed requests than descriptors for a client and an upstream socket each


def connections(route):
    _, text = route.get("/metrics")
    m = re.search(r"^mcpclass_http_connections (\d+)$", text.decode(), re.M)
    return int(m.group(1)) - 1  # less the connection asking


def low_nofile():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def test_descriptor_budget_refuses_with_503_not_502(tmp_path, upstream):
    spare = FakeUpstream().start()
    r = Route(tmp_path, models_yaml(upstream.url, **{
        "m-openai": f'{{base_url: "{upstream.url}", reasoning: openai, fallback: m-spare}}',
        "m-spare": f'{{base_url: "{spare.url}"}}'}), preexec_fn=low_nofile)
    results, errors = [], []
    go = threading.Event()

    def one():
        try:
            c = r.conn(timeout=60)
            c.connect()
            go.wait(timeout=60)
            c.request("POST", "/v1/chat/completions",
                      body=json.dumps(ask("integral", fake={"head_delay": 4})),
                      headers={"Content-Type": "application/json"})
            resp = c.getresponse()
            results.append((resp.status, resp.getheader("content-type"), resp.read()))
            c.close()
        except Exception as e:  # noqa: BLE001 - every failure is the finding
            errors.append(repr(e))

    threads = [threading.Thread(target=one) for _ in range(CLIENTS)]
    try:
        for t in threads:
            t.start()
        # Every client connection is held by the server (so the budget is what is left for the
        # upstream sockets) before the requests go.
        deadline = time.monotonic() + 60
        while connections(r) < CLIENTS and time.monotonic() < deadline:
            time.sleep(0.05)
        go.set()
        for t in threads:
            t.join()
        assert errors == []
        statuses = sorted({s for s, _, _ in results})
        counts = {s: sum(1 for x, _, _ in results if x == s) for s in statuses}
        print("statuses", counts)
        assert set(counts) == {200, 503}, counts
        for status, content_type, body in results:
            if status != 503:
                continue
            assert content_type == "application/json"
            err = json.loads(body)["error"]
            assert err["type"] == "server_error" and err["code"] == "too_many_connections", err
        # Refusals are not upstream failures: nothing counted, no fallback tried.
        assert spare.records() == []
        _, text = r.get("/metrics")
        text = text.decode()
        assert "mcpclass_route_upstream_errors_total{" not in text
        assert f'mcpclass_route_refused_total{{reason="descriptors"}} {counts[503]}' in text
        # Each refused descriptor went back: the budget serves again once the load is gone.
        assert r.post(ask("integral"))[0] == 200
    finally:
        assert r.stop() == 0
        spare.stop()
