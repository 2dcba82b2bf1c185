"""`mcpclass route` under `route.admission` (issue 34, part 4): a remote classifier behind a slow
peer (tests/client/fake_classifier_server.py, one call at a time) with one running slot and no
queue. Fail-open forwards a request whose classification was rejected, expired or failed to the
default model, unclassified, with `x-mcpclass-fail-open: <reason>`, and counts it; fail-closed
answers 503 with Retry-After in the API's error shape (docs/route.md, "Overload")."""

import concurrent.futures
import json
import os
import re
import sys

from fake_upstream import FakeUpstream

sys.path.insert(0, os.path.dirname(__file__))
from test_route import Route, ask, upstream  # noqa: E402,F401

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "client",
                    "fake_classifier_server.py")


def config(url, on_refusal, mode="slow"):
    return f"""
categories:
  - {{name: math, description: m, model: m-math, use_reasoning: false}}
  - {{name: science, description: s, model: m-math, use_reasoning: false}}
  - {{name: other, description: o, model: m-math, use_reasoning: false}}
classifier:
  kind: remote
  remote: {{transport: stdio, command: ["/usr/bin/python3", "{FAKE}"], timeout: 10,
            max_retries: 0, env: {{FAKE_MODE: {mode}, FAKE_DELAY_MS: "400"}}}}
routing:
  default_model: m-default
route:
  admission: {{max_concurrent: 1, max_queue: 0, retry_after: 3, on_refusal: {on_refusal}}}
  models:
    m-math: {{base_url: "{url}"}}
    m-default: {{base_url: "{url}"}}
    fake-model: {{base_url: "{url}"}}
"""


class ConfigRoute(Route):
    """A Route whose whole document is `text` (no shared categories)."""

    def __init__(self, tmp_path, text):
        import test_route
        saved, test_route.CATEGORIES = test_route.CATEGORIES, ""
        try:
            super().__init__(tmp_path, text)
        finally:
            test_route.CATEGORIES = saved


def burst(route, n, headers=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda i: route.post(ask(f"integral number {i}"), headers),
                             range(n)))


def metric(route, name, reason):
    _, text = route.get("/metrics")
    m = re.search(rf'^{name}{{reason="{reason}"}} (\d+)$', text.decode(), re.M)
    return int(m.group(1)) if m else 0


def test_fail_open_forwards_refused_requests_to_the_default_model(tmp_path, upstream):
    r = ConfigRoute(tmp_path, config(upstream.url, "fail_open"))
    try:
        results = burst(r, 4)
        assert [s for s, _, _ in results] == [200] * 4, results
        opened = [h for _, h, _ in results if "x-mcpclass-fail-open" in h]
        classified = [h for _, h, _ in results if "x-mcpclass-fail-open" not in h]
        assert len(classified) >= 1 and len(opened) >= 1, results
        assert all(h["x-mcpclass-fail-open"] == "rejected" for h in opened)
        models = sorted(rec["body"]["model"] for rec in upstream.records())
        assert models.count("m-default") == len(opened), models
        assert metric(r, "mcpclass_route_fail_open_total", "rejected") == len(opened)
        # Already due: expired before its turn, forwarded all the same.
        status, headers, _ = r.post(ask("integral again"), {"X-Request-Timeout-Ms": "0"})
        assert status == 200 and headers["x-mcpclass-fail-open"] == "expired", headers
        assert metric(r, "mcpclass_route_fail_open_total", "expired") == 1
        # A deadline that is not a number is named, not dropped (as every endpoint does).
        status, _, body = r.post(ask("integral"), {"X-Request-Timeout-Ms": "-5"})
        assert status == 400 and "X-Request-Timeout-Ms must be a whole number" in str(body), body
        _, text = r.get("/metrics")
        assert "mcpclass_route_admission_rejected_total " + str(len(opened)) in text.decode()
    finally:
        r.stop()


def test_fail_closed_refuses_with_503_and_retry_after(tmp_path, upstream):
    r = ConfigRoute(tmp_path, config(upstream.url, "fail_closed"))
    try:
        results = burst(r, 4)
        refused = [(h, b) for s, h, b in results if s == 503]
        assert len(refused) >= 1 and sum(1 for s, _, _ in results if s == 200) >= 1, results
        for headers, body in refused:
            assert headers["retry-after"] == "3", headers
            err = json.loads(body)["error"]
            assert err["code"] == "classification_rejected", err
            assert "route.admission: 1 running and 0 queued" in err["message"], err
        # Nothing refused reached an upstream.
        assert len(upstream.records()) == len(results) - len(refused)
        assert metric(r, "mcpclass_route_refused_total", "rejected") == len(refused)
    finally:
        r.stop()


def test_fail_open_forwards_when_the_classifier_fails(tmp_path, upstream):
    r = ConfigRoute(tmp_path, config(upstream.url, "fail_open", mode="die"))
    try:
        status, headers, _ = r.post(ask("integral of a dying peer"))
        assert status == 200 and headers["x-mcpclass-fail-open"] == "failed", headers
        assert upstream.records()[-1]["body"]["model"] == "m-default"
        assert metric(r, "mcpclass_route_fail_open_total", "failed") == 1
    finally:
        r.stop()


def test_bad_admission_settings_are_named(tmp_path, upstream):
    import subprocess
    from test_route import BIN
    for bad, said in [
            (("on_refusal: fail_closed", "on_refusal: maybe"),
             "route.admission.on_refusal: must be fail_open or fail_closed"),
            (("on_refusal: fail_closed", "on_refusal: fail_open, model: m-nowhere"),
             "no upstream for model 'm-nowhere' (route.admission.model chooses it)")]:
        cfg = tmp_path / "bad.yaml"
        cfg.write_text(config(upstream.url, "fail_closed").replace(*bad))
        out = subprocess.run([BIN, "route", "--config", str(cfg), "--http", "127.0.0.1:0"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode != 0 and said in out.stderr, out.stderr
