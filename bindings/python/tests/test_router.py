"""The router example (examples/router.py) over real sockets against the fake upstream
(tests/route/fake_upstream.py, in-process): model rewrite and reasoning fields per family,
passthrough, errors, fallback and streaming."""

import http.client
import importlib.util
import json
import pathlib
import socket
import sys
import threading
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "tests" / "route"))
from fake_upstream import FakeUpstream  # noqa: E402

_spec = importlib.util.spec_from_file_location("router", HERE.parent / "examples" / "router.py")
router_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(router_mod)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(upstream, dead_port):
    return {
        "categories": [
            {"name": "math", "description": "Math", "system_prompt": "You are a math expert.",
             "model": "m-openai", "use_reasoning": True},
            {"name": "code", "description": "Code", "system_prompt": "You write code.",
             "model": "m-vllm", "use_reasoning": False},
            {"name": "history", "description": "History", "system_prompt": "You are a historian.",
             "model": "m-deepseek", "use_reasoning": True},
            {"name": "law", "description": "Law", "system_prompt": "You are a lawyer.",
             "model": "m-dead", "use_reasoning": False},
            {"name": "general", "description": "Everything else", "system_prompt": "",
             "model": "m-none", "use_reasoning": False}],
        "classifier": {"kind": "rules", "fallback": "general", "rules": {
            "math": {"keywords": ["algebra", "derivative"]},
            "code": {"keywords": ["python", "compiler"]},
            "history": {"keywords": ["empire", "battle"]},
            "law": {"keywords": ["contract", "lawsuit"]}}},
        "routing": {
            "default_model": "m-none",
            "signals": {"keywords": [{"name": "urgent", "operator": "OR", "keywords": ["urgent"]}],
                        "pii": [{"name": "contact"}]},
            "decisions": [
                {"name": "contact_block", "priority": 200, "rules": {"type": "pii", "name": "contact"},
                 "modelRefs": [{"model": "m-none"}],
                 "plugins": [{"type": "pii", "configuration": {"action": "block"}}]},
                {"name": "urgent", "priority": 100, "rules": {"type": "keyword", "name": "urgent"},
                 "modelRefs": [{"model": "m-dead", "use_reasoning": True}],
                 "plugins": [
                     {"type": "system_prompt",
                      "configuration": {"system_prompt": "Answer fast.", "mode": "replace"}},
                     {"type": "header_mutation",
                      "configuration": {"add": [{"name": "X-Route-Tier", "value": "urgent"}],
                                        "delete": ["X-Client-Secret"]}}]}]},
        "route": {"system_prompt": "replace", "models": {
            "m-openai": {"base_url": upstream, "upstream_model": "gpt-up", "reasoning": "openai",
                         "api_key": "${ROUTER_TEST_KEY}", "reasoning_effort_off": "minimal"},
            "m-vllm": {"base_url": upstream, "upstream_model": "qwen-up", "reasoning": "vllm"},
            "m-deepseek": {"base_url": upstream + "/", "reasoning": "deepseek"},
            "m-none": {"base_url": upstream},
            "m-dead": {"base_url": f"http://127.0.0.1:{dead_port}/v1", "connect_timeout": 1,
                       "fallback": "m-vllm", "reasoning": "openai"}}},
    }


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTER_TEST_KEY", "sekret")
    fake = FakeUpstream().start()
    path = tmp_path / "router.json"
    path.write_text(json.dumps(config(fake.url, closed_port())))
    router = router_mod.Router(str(path))
    server = router_mod.serve(router)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], fake
    server.shutdown()
    server.server_close()
    router.close()
    fake.stop()


def post(port, body, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    conn.request("POST", "/v1/chat/completions", body=data,
                 headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    payload = resp.read()
    conn.close()
    return resp, payload


def ask(text, **fields):
    return {"model": "auto", "temperature": 0.25,
            "messages": [{"role": "user", "content": text}], **fields}


def test_routed_per_family(setup):
    port, fake = setup
    resp, _ = post(port, ask("What is the derivative of x^3?"), {"Authorization": "Bearer client"})
    assert resp.status == 200
    assert resp.getheader("x-mcpclass-category") == "math"
    assert resp.getheader("x-mcpclass-model") == "m-openai"
    assert resp.getheader("x-mcpclass-reasoning") == "true"
    assert len(resp.getheader("x-mcpclass-confidence")) == len("0.000000")
    rec = fake.records()[-1]
    assert rec["path"] == "/v1/chat/completions"
    assert rec["body"]["model"] == "gpt-up" and rec["body"]["reasoning_effort"] == "high"
    assert rec["body"]["temperature"] == 0.25
    assert rec["headers"]["authorization"] == "Bearer sekret"
    assert rec["body"]["messages"][0] == {"role": "system", "content": "You are a math expert."}

    # vllm: enable_thinking, other template keys kept; replace: the first system message's
    # content becomes the category's prompt; array contents give their text parts.
    post(port, {"model": "auto", "chat_template_kwargs": {"foo": 1, "enable_thinking": True},
                "messages": [{"role": "system", "content": "mine", "name": "s"},
                             {"role": "user", "content": [
                                 {"type": "text", "text": "a python"},
                                 {"type": "image_url", "image_url": {"url": "x"}},
                                 {"type": "text", "text": "compiler"}]}]},
         {"Authorization": "Bearer client"})
    rec = fake.records()[-1]
    assert rec["body"]["model"] == "qwen-up"
    assert rec["body"]["chat_template_kwargs"] == {"foo": 1, "enable_thinking": False}
    assert "authorization" not in rec["headers"]
    assert rec["body"]["messages"][0] == {"role": "system", "content": "You write code.",
                                          "name": "s"}
    assert len(rec["body"]["messages"]) == 2

    # deepseek, and last_user: only the last user message is classified.
    post(port, {"model": "auto", "messages": [
        {"role": "user", "content": "python"}, {"role": "assistant", "content": "?"},
        {"role": "user", "content": "the battle of Hastings"}]})
    rec = fake.records()[-1]
    assert rec["body"]["model"] == "m-deepseek"
    assert rec["body"]["chat_template_kwargs"] == {"thinking": True}
    assert "reasoning_effort" not in rec["body"]

    # none: no reasoning field; an empty prompt inserts nothing.
    resp, _ = post(port, ask("tell me a joke"))
    rec = fake.records()[-1]
    assert resp.getheader("x-mcpclass-reasoning") == "false"
    assert rec["body"]["model"] == "m-none"
    assert "reasoning_effort" not in rec["body"] and "chat_template_kwargs" not in rec["body"]
    assert len(rec["body"]["messages"]) == 1


def test_passthrough_and_errors(setup):
    port, fake = setup
    # The client's bytes; the model's upstream name replaces the model's, nothing else changes.
    body = '{"model": "m-vllm",  "messages": [{"role":"user","content":"derivative"}], "x": 1.50}'
    resp, _ = post(port, body)
    rec = fake.records()[-1]
    assert resp.status == 200 and rec["raw"] == body.replace('"m-vllm"', '"qwen-up"')
    assert resp.getheader("x-mcpclass-model") == "m-vllm"
    assert resp.getheader("x-mcpclass-category") is None
    body = '{"messages": [], "model" : "m-none" ,"x":[1, 2], "y": "\u00e9"}'
    resp, _ = post(port, body.encode())
    assert resp.status == 200 and fake.records()[-1]["raw"] == body
    n = len(fake.records())
    for bad, status, code in [('{"model":"gpt-9","messages":[]}', 404, "model_not_found"),
                              ('{"model":"auto","messages":', 400, "invalid_request"),
                              ("[1,2]", 400, "invalid_request"),
                              ('{"model":"auto"}', 400, "invalid_request"),
                              ('{"model":"auto","messages":{}}', 400, "invalid_request")]:
        resp, data = post(port, bad)
        assert (resp.status, json.loads(data)["error"]["code"]) == (status, code), bad
    assert len(fake.records()) == n
    resp, data = post(port, ask("hi", fake={"status": 503, "error": "busy"}))
    assert resp.status == 503 and b"busy" in data
    resp, data = post(port, ask("hi", fake={"close": True}))  # closed without an answer
    assert resp.status == 502 and json.loads(data)["error"]["code"] == "upstream_unavailable"
    assert resp.getheader("x-mcpclass-model") == "m-none"
    assert resp.getheader("x-mcpclass-category") == "general"


def test_fallback(setup):
    port, fake = setup
    resp, _ = post(port, ask("Is this contract valid?"))  # law -> m-dead -> m-vllm
    rec = fake.records()[-1]
    assert resp.status == 200 and resp.getheader("x-mcpclass-model") == "m-vllm"
    assert rec["body"]["model"] == "qwen-up"
    assert rec["body"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "reasoning_effort" not in rec["body"]


def test_streaming(setup):
    port, fake = setup
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/v1/chat/completions",
                 body=json.dumps(ask("algebra", stream=True, fake={"chunks": 3, "delay": 0.5})),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.getheader("Content-Type") == "text/event-stream"
    assert resp.getheader("x-mcpclass-category") == "math"
    start = time.monotonic()
    line = resp.readline()
    assert line.startswith(b"data: ") and b"part0" in line
    # It arrived while the upstream was still answering (it needs 1.5 s more).
    assert not fake.records()[-1]["done"] and time.monotonic() - start < 1.0
    rest = resp.read()
    assert b"part2" in rest and rest.endswith(b"data: [DONE]\n\n")
    conn.close()


def test_yaml_config(tmp_path, monkeypatch):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "router.yaml"
    path.write_text(yaml.safe_dump(config("http://127.0.0.1:9/v1", closed_port())))
    router = router_mod.Router(str(path))
    assert router.models["m-openai"].upstream_model == "gpt-up" and router.routed == ["auto"]
    ev = router.evaluate(json.dumps(ask("tell me a joke")).encode())
    assert ev["action"] == "forward" and ev["body"]["model"] == "m-none"
    router.close()


def test_decisions_block_and_header_mutation(setup):
    """A decision of the routing section: its model (unreachable here, so its fallback), its
    system prompt and header mutation reach the upstream, the x-vsr-* headers the client; a PII
    block is answered by the router and never forwarded."""
    port, fake = setup
    resp, _ = post(port, ask("urgent: is the server down?"), {"X-Client-Secret": "s"})
    rec = fake.records()[-1]
    assert resp.status == 200 and resp.getheader("x-vsr-selected-decision") == "urgent"
    assert resp.getheader("x-vsr-matched-keywords") == "urgent"
    assert resp.getheader("x-mcpclass-model") == "m-vllm"  # m-dead cannot be reached
    assert rec["body"]["model"] == "qwen-up"
    assert rec["body"]["chat_template_kwargs"] == {"enable_thinking": True}
    assert rec["body"]["messages"][0] == {"role": "system", "content": "Answer fast."}
    assert rec["headers"]["x-route-tier"] == "urgent" and "x-client-secret" not in rec["headers"]
    n = len(fake.records())
    resp, data = post(port, ask("urgent: mail jane.doe@example.com the report"))
    assert resp.status == 400 and json.loads(data)["error"]["code"] == "pii_detected"
    assert resp.getheader("x-vsr-selected-decision") == "contact_block"
    assert resp.getheader("x-vsr-response-path") == "blocked"
    assert len(fake.records()) == n
