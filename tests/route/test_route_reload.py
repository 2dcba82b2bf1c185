"""Hot reload of a real `mcpclass route` (SIGHUP): a new `route` section is applied together with
the new classifier (a new model and the category sent to it, a rotated api_key, a removed
upstream), or refused, counted, and the old generation keeps serving (docs/route.md, "Reload")."""

import json
import os
import re
import signal
import sys
import time

from fake_upstream import FakeUpstream

sys.path.insert(0, os.path.dirname(__file__))
from test_route import CATEGORIES, Route, ask, models_yaml, upstream  # noqa: E402,F401

NO_WATCH = "server: {reload: {watch: false}}\n"


def metric(route, name):
    _, text = route.get("/metrics")
    m = re.search(rf"^{name} (\d+)$", text.decode(), re.M)
    return int(m.group(1)) if m else None


def reload(route, config, text, counter):
    """Writes `text` over the configuration, sends SIGHUP, waits until `counter` moved."""
    before = metric(route, counter)
    tmp = f"{config}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, config)
    route.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if metric(route, counter) == before + 1:
            return
        time.sleep(0.05)
    raise AssertionError(f"{counter} did not move after SIGHUP")


def test_new_model_key_rotation_and_removal_are_applied(tmp_path, upstream):
    other = FakeUpstream().start()
    config = tmp_path / "router.yaml"
    r = Route(tmp_path, models_yaml(upstream.url, **{
        "m-none": f'{{base_url: "{upstream.url}", api_key: "old-key"}}'}), extra=NO_WATCH)
    try:
        first = r.post(ask("integral"))[1]
        assert first["x-mcpclass-model"] == "m-openai"
        # The classifier that chose the category names itself (classify::Provenance).
        assert first["x-mcpclass-classifier"] == "rules" and first["x-mcpclass-generation"] == "1"
        assert first["x-mcpclass-model-id"].startswith("fnv1a64:")
        assert first["x-mcpclass-cached"] == "false" and first["x-mcpclass-fallback"] == "false"
        # math goes to a new model on another upstream; m-none's key is rotated; m-deepseek goes
        # (biology, which chose it, now chooses m-none).
        categories = CATEGORIES.replace("model: m-openai", "model: m-new").replace(
            "model: m-deepseek", "model: m-none")
        routes = models_yaml(upstream.url, **{
            "m-new": f'{{base_url: "{other.url}", api_key: "new-model-key", reasoning: openai}}',
            "m-none": f'{{base_url: "{upstream.url}", api_key: "new-key"}}'})
        routes = "\n".join(line for line in routes.splitlines() if "m-deepseek" not in line)
        reload(r, config, categories + NO_WATCH + routes + "\n", "mcpclass_config_generation")
        assert metric(r, "mcpclass_config_reload_failures_total") == 0

        status, headers, body = r.post(ask("integral"))
        assert status == 200, body
        assert headers["x-mcpclass-category"] == "math" and headers["x-mcpclass-model"] == "m-new"
        # The same categories and rules (only their models moved): the same ids, a new generation.
        assert headers["x-mcpclass-generation"] == "2"
        assert [headers[k] for k in ("x-mcpclass-model-id", "x-mcpclass-taxonomy")] == \
            [first[k] for k in ("x-mcpclass-model-id", "x-mcpclass-taxonomy")]
        got = other.records()
        assert len(got) == 1 and got[0]["body"]["model"] == "m-new"
        assert got[0]["headers"]["authorization"] == "Bearer new-model-key"
        assert got[0]["body"]["reasoning_effort"] == "high"

        upstream.clear()
        status, headers, _ = r.post(ask("tell me a joke"))
        assert status == 200 and headers["x-mcpclass-model"] == "m-none"
        assert upstream.records()[0]["headers"]["authorization"] == "Bearer new-key"

        status, headers, _ = r.post(ask("an enzyme in a cell"))
        assert status == 200 and headers["x-mcpclass-model"] == "m-none"
        status, _, body = r.post({"model": "m-deepseek", "messages": []})
        assert status == 404 and json.loads(body)["error"]["code"] == "model_not_found"
        _, body = r.get("/v1/models")
        assert [m["id"] for m in json.loads(body)["data"]] == \
            ["auto", "m-new", "m-none", "m-openai", "m-vllm"]
    finally:
        assert r.stop() == 0
        other.stop()


def test_a_route_section_that_cannot_be_built_is_refused(tmp_path, upstream):
    config = tmp_path / "router.yaml"
    r = Route(tmp_path, models_yaml(upstream.url), extra=NO_WATCH)
    try:
        # Parses, but its api_key names an unset variable: only building the upstreams finds it.
        categories = CATEGORIES.replace("model: m-openai", "model: m-new")
        routes = models_yaml(upstream.url, **{
            "m-new": f'{{base_url: "{upstream.url}", api_key: "${{MCPCLASS_NO_SUCH_VAR}}"}}'})
        reload(r, config, categories + NO_WATCH + routes, "mcpclass_config_reload_failures_total")
        # A section that does not parse is refused too.
        bad = models_yaml(upstream.url, **{"m-none": '{base_url: "ftp://x/v1"}'})
        reload(r, config, CATEGORIES + NO_WATCH + bad, "mcpclass_config_reload_failures_total")
        assert metric(r, "mcpclass_config_reload_failures_total") == 2
        assert metric(r, "mcpclass_config_generation") == 1

        # The first generation keeps serving, classifier and upstreams alike.
        status, headers, body = r.post(ask("integral"))
        assert status == 200, body
        assert headers["x-mcpclass-model"] == "m-openai"
        assert upstream.records()[-1]["body"]["model"] == "m-openai"
        status, _, _ = r.post({"model": "m-new", "messages": []})
        assert status == 404
    finally:
        assert r.stop() == 0
    assert any("reload refused" in line and "MCPCLASS_NO_SUCH_VAR" in line
               for line in r.proc.stderr.read().splitlines())


def test_a_conversation_redis_with_unusable_tls_files_is_refused(tmp_path, upstream):
    """The conversations' Redis link starts only once a reload is committed, a step that must not
    throw: its TLS files are checked before, and a missing one refuses the reload, naming the key
    (it escaped the reload's error handling before)."""
    config = tmp_path / "router.yaml"
    r = Route(tmp_path, models_yaml(upstream.url), extra=NO_WATCH)
    try:
        conversation = ("  conversation:\n    backend_type: redis\n"
                        f"    redis: {{address: '127.0.0.1:1', tls: {{ca_file: '{tmp_path}/no-ca.pem'}}}}\n")
        routes = models_yaml(upstream.url).replace("  models:\n", conversation + "  models:\n", 1)
        reload(r, config, CATEGORIES + NO_WATCH + routes, "mcpclass_config_reload_failures_total")
        assert metric(r, "mcpclass_config_generation") == 1
        status, headers, body = r.post(ask("integral"))
        assert status == 200 and headers["x-mcpclass-model"] == "m-openai", body
    finally:
        assert r.stop() == 0
    assert any("reload refused" in line and "route.conversation.redis.tls.ca_file" in line
               for line in r.proc.stderr.read().splitlines())


def test_requests_in_flight_finish_on_their_generation(tmp_path, upstream):
    other = FakeUpstream().start()
    config = tmp_path / "router.yaml"
    r = Route(tmp_path, models_yaml(upstream.url), extra=NO_WATCH)
    try:
        c = r.conn(timeout=30)
        c.request("POST", "/v1/chat/completions",
                  body=json.dumps(ask("algebra", stream=True, fake={"chunks": 4, "delay": 0.5})),
                  headers={"Content-Type": "application/json"})
        resp = c.getresponse()
        assert resp.status == 200 and b"part0" in resp.read1(65536)
        # Every model moves to the other upstream while the stream is still running.
        reload(r, config, CATEGORIES + NO_WATCH + models_yaml(other.url),
               "mcpclass_config_generation")
        rest = resp.read()
        assert b"part3" in rest and rest.rstrip().endswith(b"data: [DONE]")
        c.close()
        assert r.post(ask("algebra"))[0] == 200
        assert len(upstream.records()) == 1 and len(other.records()) == 1
    finally:
        assert r.stop() == 0
        other.stop()
