"""`mcpclass route` with backend pools (docs/route.md, "Backend pools"), as a process in front of
several real fake upstreams (fake_upstream.py counts the calls each receives): the weighted split
over 10,000 requests, passive ejection of an endpoint that refuses connections or answers 5xx
(nothing reaches it until its time is up, then it is back), connect failures retried on another
endpoint with no request lost or doubled, a 5xx or a close after the request was sent never
retried, active health checks, per-endpoint metrics, and the Semantic Router's `providers.models`
spelling."""

import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from fake_upstream import FakeUpstream  # noqa: E402
from test_route import BIN, CATEGORIES, Route, closed_port  # noqa: E402

OTHERS = ("m-openai", "m-vllm", "m-deepseek")
FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_upstream.py")


class UpstreamProcess:
    """fake_upstream.py in a process of its own, so that three of them and the test's clients do
    not share one interpreter lock."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, FAKE], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def count(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/_records")
        records = json.loads(conn.getresponse().read())
        conn.close()
        return len([r for r in records if not r.get("health")])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def calls(up):
    """The chat requests `up` received (not its health checks)."""
    return [r for r in up.records() if not r.get("health")]


def pool_yaml(refs, reliability=None, other_url=None):
    """route.models with m-none as a pool of `refs` [(name, url, weight)]; the other models of
    test_route.CATEGORIES on `other_url` (or the first ref)."""
    other = other_url or refs[0][1]
    lines = ["route:", "  models:"]
    for m in OTHERS:
        lines.append(f'    {m}: {{base_url: "{other}"}}')
    lines.append("    m-none:")
    lines.append("      backend_refs:")
    for name, url, weight in refs:
        lines.append(f'        - {{name: {name}, base_url: "{url}", weight: {weight}}}')
    if reliability:
        lines.append(f"      reliability: {json.dumps(reliability)}")
    return "\n".join(lines) + "\n"


def metric(route, name, endpoint, model="m-none"):
    status, body = route.get("/metrics")
    assert status == 200
    m = re.search(r'^%s\{model="%s",endpoint="%s"\} (\d+)$' % (name, model, endpoint),
                  body.decode(), re.M)
    return int(m.group(1)) if m else None


def wait_back(route, endpoint):
    """Polls the gauge until `endpoint`'s ejection time is up (it reads the proxy's clock)."""
    deadline = time.monotonic() + 30
    while metric(route, "mcpclass_route_endpoint_ejected", endpoint) != 0:
        assert time.monotonic() < deadline, f"{endpoint} stayed ejected"
        time.sleep(0.05)


def ask(conn, model="m-none"):
    conn.request("POST", "/v1/chat/completions",
                 body=json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    return r.status


@pytest.fixture
def ups():
    started = [FakeUpstream().start() for _ in range(3)]
    yield started
    for up in started:
        up.stop()


@pytest.fixture
def upstream_processes():
    started = [UpstreamProcess() for _ in range(3)]
    yield started
    for up in started:
        up.stop()


def test_weighted_split_over_10000_requests_within_2_percent(tmp_path, upstream_processes):
    # The Semantic Router's spelling: providers.models with backend_refs by endpoint and weight.
    a, b, c = upstream_processes
    models = "\n".join(
        f"    - {{name: {m}, backend_refs: [{{endpoint: \"127.0.0.1:{a.port}\"}}]}}"
        for m in OTHERS)
    providers = f"""providers:
  models:
{models}
    - name: m-none
      reliability: {{consecutive_5xx: 5, base_ejection_time: 30s, max_ejection_percent: 50}}
      backend_refs:
        - {{name: five, endpoint: "127.0.0.1:{a.port}", protocol: http, weight: 50}}
        - {{name: three, endpoint: "127.0.0.1:{b.port}", protocol: http, weight: 30}}
        - {{name: two, endpoint: "127.0.0.1:{c.port}", protocol: http, weight: 20}}
"""
    route = Route(tmp_path, providers)
    try:
        total, clients = 10_000, 16
        statuses = []
        lock = threading.Lock()
        t0 = time.monotonic()

        def client(n):
            conn = http.client.HTTPConnection("127.0.0.1", route.port, timeout=30)
            got = [ask(conn) for _ in range(n)]  # one keep-alive connection per client
            conn.close()
            with lock:
                statuses.extend(got)

        threads = [threading.Thread(target=client, args=(total // clients,))
                   for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.monotonic() - t0
        assert statuses == [200] * total
        counts = [up.count() for up in upstream_processes]
        print(f"10,000 requests through a pool of three in {seconds:.1f} s: {counts}")
        assert sum(counts) == total
        for got, weight in zip(counts, (0.5, 0.3, 0.2)):
            assert abs(got / total - weight) <= 0.02, counts
        assert [metric(route, "mcpclass_route_endpoint_requests_total", n)
                for n in ("five", "three", "two")] == counts
        assert metric(route, "mcpclass_route_endpoint_ejected", "five") == 0
    finally:
        assert route.stop() == 0


def test_refused_endpoint_is_retried_ejected_until_its_time_then_back(tmp_path, ups):
    good = ups[0]
    port = closed_port()
    route = Route(tmp_path, pool_yaml(
        [("good", good.url, 1), ("down", f"http://127.0.0.1:{port}/v1", 1)],
        {"consecutive_5xx": 2, "base_ejection_time": "3s", "max_ejection_percent": 50}))
    try:
        conn = route.conn()
        # Every request is answered: the refused connections were retried on "good".
        assert [ask(conn) for _ in range(20)] == [200] * 20
        assert len(calls(good)) == 20
        assert metric(route, "mcpclass_route_endpoint_failures_total", "down") == 2
        assert metric(route, "mcpclass_route_endpoint_ejections_total", "down") == 1
        assert metric(route, "mcpclass_route_endpoint_ejected", "down") == 1
        # Ejected: not one more attempt on it while its time runs.
        assert metric(route, "mcpclass_route_endpoint_requests_total", "down") == 2
        # It comes up; once its time is up it is back in rotation.
        back = FakeUpstream(port=port).start()
        try:
            wait_back(route, "down")
            assert [ask(conn) for _ in range(10)] == [200] * 10
            assert len(calls(back)) == 5
            assert metric(route, "mcpclass_route_endpoint_ejected", "down") == 0
        finally:
            back.stop()
        conn.close()
    finally:
        assert route.stop() == 0


def test_5xx_after_send_is_not_retried_and_ejects_the_endpoint(tmp_path, ups):
    good, bad = ups[0], ups[1]
    bad.fake = {"status": 503, "error": "overloaded"}
    route = Route(tmp_path, pool_yaml(
        [("good", good.url, 1), ("bad", bad.url, 1)],
        {"consecutive_5xx": 2, "base_ejection_time": 3, "max_ejection_percent": 50}))
    try:
        conn = route.conn()
        first = [ask(conn) for _ in range(4)]
        # The 503s pass through: the upstream got the request, so it is never sent again.
        assert sorted(first) == [200, 200, 503, 503]
        assert len(calls(bad)) == 2 and len(calls(good)) == 2
        assert metric(route, "mcpclass_route_endpoint_ejected", "bad") == 1
        assert [ask(conn) for _ in range(10)] == [200] * 10
        assert len(calls(bad)) == 2 and len(calls(good)) == 12
        bad.fake = {}
        wait_back(route, "bad")
        assert [ask(conn) for _ in range(4)] == [200] * 4
        assert len(calls(bad)) == 4
        conn.close()
    finally:
        assert route.stop() == 0


def test_connect_failures_lose_no_request_under_concurrency(tmp_path, ups):
    a, b = ups[0], ups[1]
    # Never ejected (consecutive_5xx 0): every request that picks "down" is retried elsewhere.
    route = Route(tmp_path, pool_yaml(
        [("a", a.url, 1), ("down", f"http://127.0.0.1:{closed_port()}/v1", 1), ("b", b.url, 1)],
        {"consecutive_5xx": 0}))
    try:
        statuses = []
        lock = threading.Lock()

        def client():
            conn = route.conn()
            got = [ask(conn) for _ in range(25)]
            with lock:
                statuses.extend(got)

        threads = [threading.Thread(target=client) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert statuses == [200] * 300
        assert len(calls(a)) + len(calls(b)) == 300  # none lost, none sent twice
        assert metric(route, "mcpclass_route_endpoint_failures_total", "down") == \
            metric(route, "mcpclass_route_endpoint_requests_total", "down") > 0
        assert metric(route, "mcpclass_route_endpoint_ejections_total", "down") == 0
    finally:
        assert route.stop() == 0


def test_every_endpoint_refused_goes_to_the_fallback(tmp_path, ups):
    fallback = ups[0]
    yaml = pool_yaml([("x", f"http://127.0.0.1:{closed_port()}/v1", 1),
                      ("y", f"http://127.0.0.1:{closed_port()}/v1", 1)],
                     other_url=fallback.url)
    yaml = yaml.replace("    m-none:\n", "    m-none:\n      fallback: m-openai\n")
    route = Route(tmp_path, yaml)
    try:
        status, headers, _ = route.post({"model": "auto",
                                         "messages": [{"role": "user", "content": "hello"}]})
        assert status == 200 and headers["x-mcpclass-model"] == "m-openai"
        assert metric(route, "mcpclass_route_endpoint_failures_total", "x") == 1
        assert metric(route, "mcpclass_route_endpoint_failures_total", "y") == 1
    finally:
        assert route.stop() == 0


def test_active_health_checks_eject_before_any_request(tmp_path, ups):
    good, sick = ups[0], ups[1]
    sick.fake = {"status": 500}
    route = Route(tmp_path, pool_yaml(
        [("good", good.url, 1), ("sick", sick.url, 1)],
        {"consecutive_5xx": 2, "base_ejection_time": 60, "health_check_path": "/health",
         "health_check_interval": "100ms", "health_check_timeout": 1}))
    try:
        deadline = time.monotonic() + 10
        while metric(route, "mcpclass_route_endpoint_ejected", "sick") != 1:
            assert time.monotonic() < deadline, "the failing health checks did not eject it"
            time.sleep(0.05)
        assert any(r.get("health") and r["path"] == "/health" for r in sick.records())
        conn = route.conn()
        assert [ask(conn) for _ in range(6)] == [200] * 6
        assert calls(sick) == [] and len(calls(good)) == 6
        assert metric(route, "mcpclass_route_endpoint_ejected", "good") == 0
    finally:
        assert route.stop() == 0


def test_a_request_the_upstream_read_is_never_sent_to_another_endpoint(tmp_path, ups):
    closer, good = ups[0], ups[1]
    closer.fake = {"close": True}  # reads the request, then closes without an answer
    route = Route(tmp_path, pool_yaml([("closer", closer.url, 1), ("good", good.url, 1)],
                                      other_url=good.url))
    try:
        conn = route.conn()
        assert ask(conn) == 502  # the first turn is closer's
        assert len(calls(closer)) == 1 and calls(good) == []
        assert metric(route, "mcpclass_route_endpoint_failures_total", "closer") == 1
        conn.close()
    finally:
        assert route.stop() == 0


@pytest.mark.parametrize("pool, message", [
    ("{backend_refs: []}", "route.models.m-none.backend_refs: must name at least one backend"),
    ("{backend_refs: [{base_url: 'http://a/v1', weight: 0}]}",
     "route.models.m-none.backend_refs[0].weight: must be an integer within [1, 1000000]"),
    ("{base_url: 'http://a/v1', backend_refs: [{base_url: 'http://b/v1'}]}",
     "route.models.m-none.backend_refs: give base_url or backend_refs, not both"),
])
def test_bad_pools_are_config_errors_naming_the_key(tmp_path, pool, message):
    config = tmp_path / "c.yaml"
    others = "".join(f"    {m}: {{base_url: 'http://a/v1'}}\n" for m in OTHERS)
    config.write_text(CATEGORIES + f"route:\n  models:\n{others}    m-none: {pool}\n")
    p = subprocess.run([BIN, "config", "-c", str(config)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and message in p.stderr, p.stderr
