"""`mcpclass route` as a process, over real sockets, in front of the fake upstream
(fake_upstream.py): the decision and rewrite per reasoning family, streaming without buffering,
cancellation on client disconnect, dead upstreams and fallbacks, bad input, passthrough,
keep-alive reuse, auth, metrics, and the official `openai` npm client (docs/route.md)."""

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from fake_upstream import FakeUpstream  # noqa: E402
from test_cli import make_pki  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN", "build/mcpclass")
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))

CATEGORIES = """
categories:
  - {name: math, description: m, system_prompt: "You are a math tutor.", model: m-openai, use_reasoning: true}
  - {name: history, description: h, model: m-vllm, use_reasoning: false}
  - {name: biology, description: b, model: m-deepseek, use_reasoning: true}
  - {name: other, description: o, model: m-none, use_reasoning: false}
classifier:
  kind: rules
  fallback: other
  rules:
    math: {keywords: [integral, algebra]}
    history: {keywords: [empire, dynasty]}
    biology: {keywords: [cell, enzyme]}
routing:
  default_model: m-none
"""


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Route:
    """A running `mcpclass route` with a config written to tmp_path."""

    def __init__(self, tmp_path, route_yaml, extra="", env=None, **popen):
        """`popen`: more subprocess.Popen arguments (e.g. preexec_fn)."""
        config = tmp_path / "router.yaml"
        config.write_text(CATEGORIES + extra + route_yaml)
        self.proc = subprocess.Popen(
            [BIN, "route", "--config", str(config), "--http", "127.0.0.1:0"],
            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}, **popen)
        self.log = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"routing \d+ models on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                return
        self.proc.kill()
        raise RuntimeError("route did not start: " + "".join(self.log) + self.proc.stderr.read())

    def conn(self, timeout=10):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def post(self, body, headers=None, raw=None):
        c = self.conn()
        data = raw if raw is not None else json.dumps(body).encode()
        c.request("POST", "/v1/chat/completions", body=data,
                  headers={"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        c.close()
        return out

    def get(self, path, headers=None):
        c = self.conn()
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        out = (r.status, r.read())
        c.close()
        return out

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return self.proc.returncode


def models_yaml(url, fallback_url=None, **overrides):
    models = {
        "m-openai": f'{{base_url: "{url}", reasoning: openai}}',
        "m-vllm": f'{{base_url: "{url}", reasoning: vllm, upstream_model: Qwen/Qwen3-8B}}',
        "m-deepseek": f'{{base_url: "{url}", reasoning: deepseek}}',
        "m-none": f'{{base_url: "{url}"}}',
    }
    models.update(overrides)
    lines = "\n".join(f"    {k}: {v}" for k, v in models.items())
    return f"route:\n  system_prompt: insert\n  models:\n{lines}\n"


@pytest.fixture
def upstream():
    up = FakeUpstream().start()
    yield up
    up.stop()


@pytest.fixture
def route(tmp_path, upstream):
    r = Route(tmp_path, models_yaml(upstream.url))
    yield r
    assert r.stop() == 0


def ask(text, **fields):
    return {"model": "auto", "messages": [{"role": "user", "content": text}], **fields}


def test_decision_and_reasoning_per_family(route, upstream):
    cases = [
        ("what is the integral of x squared", "math", "m-openai", "true"),
        ("when did the roman empire fall", "history", "m-vllm", "false"),
        ("what does an enzyme do in a cell", "biology", "m-deepseek", "true"),
        ("tell me a joke", "other", "m-none", "false"),
    ]
    for text, category, model, reasoning in cases:
        status, headers, body = route.post(
            ask(text, chat_template_kwargs={"keep": 1}, temperature=0.5))
        assert status == 200, body
        assert headers["x-mcpclass-category"] == category
        assert headers["x-mcpclass-model"] == model
        assert headers["x-mcpclass-reasoning"] == reasoning
        assert 0 < float(headers["x-mcpclass-confidence"]) <= 1
        assert headers["content-type"] == "application/json"
        assert json.loads(body)["choices"][0]["message"]["content"].startswith("answer from")
    got = [r["body"] for r in upstream.records()]
    assert [b["model"] for b in got] == ["m-openai", "Qwen/Qwen3-8B", "m-deepseek", "m-none"]
    # Each family reads the decision its own way; other fields pass through.
    assert got[0]["reasoning_effort"] == "high" and got[0]["chat_template_kwargs"] == {"keep": 1}
    assert got[1]["chat_template_kwargs"] == {"keep": 1, "enable_thinking": False}
    assert "reasoning_effort" not in got[1]
    assert got[2]["chat_template_kwargs"] == {"keep": 1, "thinking": True}
    assert got[3]["chat_template_kwargs"] == {"keep": 1} and "reasoning_effort" not in got[3]
    assert all(b["temperature"] == 0.5 for b in got)
    # system_prompt: insert puts the category's prompt first (math has one, the others none).
    assert got[0]["messages"][0] == {"role": "system", "content": "You are a math tutor."}
    assert got[1]["messages"][0]["role"] == "user"


def test_text_from_the_last_user_message_and_array_parts(route, upstream):
    body = {"model": "auto", "messages": [
        {"role": "user", "content": "the roman empire"},
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}},
                                     {"type": "text", "text": "and the integral?"}]}]}
    status, headers, _ = route.post(body)
    assert status == 200 and headers["x-mcpclass-category"] == "math"


def test_stream_chunks_arrive_before_the_upstream_finished(route, upstream):
    c = route.conn()
    c.request("POST", "/v1/chat/completions",
              body=json.dumps(ask("algebra", stream=True, fake={"chunks": 3, "delay": 0.6})),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("content-type") == "text/event-stream"
    assert r.getheader("x-mcpclass-category") == "math"
    first = r.read1(65536)
    assert first.startswith(b"data: ") and b"part0" in first
    # The upstream is still sleeping before its next chunk: nothing was buffered whole.
    assert upstream.records()[0]["done"] is False
    rest = r.read()
    assert b"part2" in rest and rest.rstrip().endswith(b"data: [DONE]")
    c.close()


def test_client_disconnect_cancels_the_upstream_request(route, upstream):
    s = socket.create_connection(("127.0.0.1", route.port))
    body = json.dumps(ask("algebra", stream=True, fake={"chunks": 200, "delay": 0.05})).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    assert b"part0" in s.recv(65536) or b"part0" in s.recv(65536)
    s.close()
    # 200 chunks take 10 s; the upstream sees its connection closed long before.
    t0 = time.monotonic()
    records = upstream.wait_for(lambda rs: rs and rs[0]["disconnected"], timeout=5)
    assert time.monotonic() - t0 < 5
    assert records[0]["done"] is False and records[0].get("sent", 0) < 200


def test_upstream_error_status_passes_through(route, upstream):
    status, headers, body = route.post(ask("algebra", fake={"status": 429, "error": "slow down"}))
    assert status == 429
    assert json.loads(body)["error"]["message"] == "slow down"
    assert headers["x-mcpclass-model"] == "m-openai"


def test_dead_upstream_502_and_fallback(tmp_path, upstream):
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    r = Route(tmp_path, models_yaml(
        upstream.url,
        **{"m-openai": f'{{base_url: "{dead}", reasoning: openai, fallback: m-vllm}}',
           "m-deepseek": f'{{base_url: "{dead}", connect_timeout: 2}}'}))
    try:
        status, headers, body = r.post(ask("integral"))  # m-openai is dead: m-vllm serves
        assert status == 200, body
        assert headers["x-mcpclass-model"] == "m-vllm"
        assert headers["x-mcpclass-category"] == "math"
        got = upstream.records()[0]["body"]
        # Rewritten for the fallback's family, not the first choice's.
        assert got["model"] == "Qwen/Qwen3-8B"
        assert got["chat_template_kwargs"] == {"enable_thinking": True}
        assert "reasoning_effort" not in got

        status, headers, body = r.post(ask("enzyme"))  # m-deepseek: dead, no fallback
        assert status == 502
        err = json.loads(body)["error"]
        assert err["code"] == "upstream_unavailable" and "m-deepseek" in err["message"]
        assert headers["content-type"] == "application/json"

        _, text = r.get("/metrics")
        assert 'mcpclass_route_upstream_errors_total{model="m-deepseek",reason="connect"} 1' in \
            text.decode()
    finally:
        assert r.stop() == 0


def test_upstream_timeout_504(tmp_path, upstream):
    r = Route(tmp_path, models_yaml(upstream.url, **{
        "m-openai": f'{{base_url: "{upstream.url}", reasoning: openai, timeout: 1}}'}))
    try:
        t0 = time.monotonic()
        status, headers, body = r.post(ask("algebra", fake={"head_delay": 4}))
        assert status == 504 and time.monotonic() - t0 < 3.5, body
        err = json.loads(body)["error"]
        assert err["code"] == "upstream_timeout" and "m-openai" in err["message"]
        assert headers["x-mcpclass-model"] == "m-openai"
    finally:
        assert r.stop() == 0


def test_https_upstream_is_verified(tmp_path):
    pki = make_pki(tmp_path)
    up = FakeUpstream(tls=(pki["server.pem"], pki["server.key"])).start()
    r = Route(tmp_path, models_yaml(up.url, **{
        "m-openai": f'{{base_url: "{up.url}", reasoning: openai, ca_file: "{pki["ca.pem"]}"}}'}))
    try:
        status, headers, body = r.post(ask("algebra"))  # m-openai trusts the test CA
        assert status == 200, body
        assert json.loads(body)["model"] == "m-openai"
        status, _, body = r.post(ask("enzyme"))  # m-deepseek: the system's trust store
        assert status == 502
        assert "certificate" in json.loads(body)["error"]["message"]
        assert len(up.records()) == 1
    finally:
        assert r.stop() == 0
        up.stop()


def test_upstream_that_breaks_mid_answer_truncates(route, upstream):
    status, _, body = route.post(ask("algebra", fake={"close": True}))
    assert status == 502
    assert json.loads(body)["error"]["code"] == "upstream_unavailable"


@pytest.mark.parametrize("raw, message", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"model": "auto"}', "'messages' is required"),
    (b'{"model": "auto", "messages": "hi"}', "'messages' is required"),
    (b'{"model": 7, "messages": []}', "'model' must be a string"),
])
def test_bad_input_400_in_openai_format(route, upstream, raw, message):
    status, _, body = route.post(None, raw=raw)
    assert status == 400
    err = json.loads(body)["error"]
    assert err["type"] == "invalid_request_error" and err["code"] == "invalid_request"
    assert message in err["message"]
    assert upstream.records() == []


def test_unknown_model_404_and_models_list(route, upstream):
    status, _, body = route.post({"model": "gpt-9", "messages": []})
    assert status == 404 and json.loads(body)["error"]["code"] == "model_not_found"
    status, body = route.get("/v1/models")
    assert status == 200
    ids = [m["id"] for m in json.loads(body)["data"]]
    assert ids == ["auto", "m-deepseek", "m-none", "m-openai", "m-vllm"]
    status, body = route.get("/v1/nope")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
    # Answered requests hold nothing (each unknown model once leaked its bookkeeping).
    _, text = route.get("/metrics")
    assert "\nmcpclass_route_in_flight 0\n" in text.decode()


def test_oversized_body_413_in_openai_format(tmp_path, upstream):
    r = Route(tmp_path, models_yaml(upstream.url),
              extra="server: {http: {max_body_bytes: 2000}}\n")
    try:
        status, _, body = r.post(ask("x" * 5000))
        assert status == 413
        err = json.loads(body)["error"]
        assert err["code"] == "request_too_large" and "2000" in err["message"]
        assert upstream.records() == []
    finally:
        assert r.stop() == 0


def test_upstream_connections_are_kept_alive(route, upstream):
    for _ in range(6):
        assert route.post(ask("algebra"))[0] == 200
    conns = {r["conn"] for r in upstream.records()}
    # One kept connection per server I/O thread (the exchange runs on the client connection's).
    assert len(upstream.records()) == 6 and len(conns) <= 2


def test_tokens_guard_route_and_api_key_goes_upstream(tmp_path, upstream):
    r = Route(tmp_path, models_yaml(upstream.url, **{
        "m-openai": f'{{base_url: "{upstream.url}", reasoning: openai, api_key: "${{UP_KEY}}"}}'}),
        extra="server: {http: {auth: {bearer_tokens: [client-token]}}}\n",
        env={"UP_KEY": "upstream-secret"})
    try:
        assert r.post(ask("algebra"))[0] == 401
        status, _, _ = r.post(ask("algebra"), headers={"Authorization": "Bearer client-token"})
        assert status == 200
        got = upstream.records()
        assert len(got) == 1
        # The client's token is the proxy's business; the upstream gets its own key.
        assert got[0]["headers"]["authorization"] == "Bearer upstream-secret"
    finally:
        assert r.stop() == 0


def test_metrics_count_routes(route, upstream):
    route.post(ask("algebra"))
    route.post({"model": "m-none", "messages": []})
    _, text = route.get("/metrics")
    text = text.decode()
    assert 'mcpclass_route_requests_total{category="math",model="m-openai"} 1' in text
    assert 'mcpclass_route_requests_total{category="passthrough",model="m-none"} 1' in text
    assert "mcpclass_route_decision_seconds_count 1" in text
    assert 'mcpclass_route_upstream_seconds_count{model="m-openai"} 1' in text
    assert 'mcpclass_route_first_byte_seconds_count{model="m-openai"} 1' in text


def test_route_without_a_route_section_is_a_config_error(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(CATEGORIES)
    p = subprocess.run([BIN, "route", "--config", str(config), "--http", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "needs a `route` section" in p.stderr


def node_for_tests():
    out = subprocess.run([os.path.join(SOURCE, "scripts", "node-for-tests.sh")],
                         capture_output=True, text=True).stdout.strip()
    return os.path.join(out, "node") if out else None


CLIENT_PACKAGES = ("openai", "@anthropic-ai/sdk")


def run_node_client(script, timeout=60):
    """Runs `script` (CommonJS) with Node 20+ and returns what it printed, parsed as JSON. The
    official API clients (CLIENT_PACKAGES, pinned in tests/conformance/package.json) are
    installed there once with npm ci; `require(client_module(name))` loads one."""
    conformance = os.path.join(SOURCE, "tests", "conformance")
    if not all(os.path.isdir(client_module(name)) for name in CLIENT_PACKAGES):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=conformance, check=True)
    node = node_for_tests()
    assert node and shutil.which(node), "no Node.js 20+ for the API clients"
    p = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def client_module(name):
    """The directory of the pinned npm package `name` (tests/conformance/node_modules)."""
    return os.path.join(SOURCE, "tests", "conformance", "node_modules", name)


def test_openai_npm_client_streaming_and_not(route, upstream):
    script = textwrap.dedent(f"""
        const OpenAI = require({json.dumps(client_module("openai"))}).default;
        (async () => {{
          const client = new OpenAI({{baseURL: "http://127.0.0.1:{route.port}/v1", apiKey: "x"}});
          const {{data, response}} = await client.chat.completions.create(
              {{model: "auto", messages: [{{role: "user", content: "the integral of x"}}]}})
              .withResponse();
          const parts = [];
          const stream = await client.chat.completions.create(
              {{model: "auto", stream: true,
                messages: [{{role: "user", content: "the ming dynasty"}}]}});
          for await (const chunk of stream) parts.push(chunk.choices[0].delta.content || "");
          const models = await client.models.list();
          console.log(JSON.stringify({{
            content: data.choices[0].message.content, model: data.model,
            category: response.headers.get("x-mcpclass-category"),
            streamed: parts.join(""), models: models.data.map(m => m.id)}}));
        }})().catch(e => {{ console.error(e); process.exit(1); }});
    """)
    out = run_node_client(script)
    assert out["content"] == "answer from m-openai" and out["model"] == "m-openai"
    assert out["category"] == "math"
    assert out["streamed"] == "part0 part1 part2 "
    assert out["models"][0] == "auto"
    assert [r["body"]["stream"] for r in upstream.records() if "stream" in r["body"]] == [True]


@pytest.mark.parametrize("route_yaml, message", [
    ("route: {models: {}}", "route.models: must name at least one model"),
    ("route: {modles: {}}", "route.modles"),
    ("route: {models: {m-none: {base_url: 'ftp://x/v1'}}}",
     "route.models.m-none.base_url: 'ftp://x/v1' is not an http:// or https:// URL"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', reasoning: magic}}}",
     "route.models.m-none.reasoning: 'magic' is not one of none, openai, vllm, deepseek"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', fallback: nowhere}}}",
     "route.models.m-none.fallback: 'nowhere' is not a model under route.models"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', fallback: m-none}}}",
     "a model cannot be its own fallback"),
    ("route: {routed_models: [m-none], models: {m-none: {base_url: 'http://x/v1'}}}",
     "'m-none' is also a model under route.models"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', api_format: grpc}}}",
     "route.models.m-none.api_format: 'grpc' is not one of openai, anthropic"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', api_format: anthropic, reasoning: vllm}}}",
     "route.models.m-none.reasoning: 'vllm' is not a reasoning style of api_format anthropic"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', reasoning: anthropic}}}",
     "route.models.m-none.reasoning: 'anthropic' is not a reasoning style of api_format openai"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', api_format: anthropic, "
     "thinking_budget: 100}}}", "route.models.m-none.thinking_budget: must be in [1024, 1000000]"),
    ("route: {models: {m-none: {base_url: 'http://x/v1', fallback: c}, "
     "c: {base_url: 'http://x/v1', api_format: anthropic}}}",
     "route.models.m-none.fallback: 'c' has api_format anthropic, 'm-none' has openai"),
    ("route: {upstream_threads: 0, models: {m-none: {base_url: 'http://x/v1'}}}",
     "route.upstream_threads: must be in [1, 64]"),
    ("route: {models: {m-none: {base_url: 'http://x/v1'}}}",
     "route.models: no upstream for model 'm-openai' (category 'math' chooses it)"),
])
def test_route_section_errors_name_the_key(tmp_path, route_yaml, message):
    config = tmp_path / "c.yaml"
    config.write_text(CATEGORIES + route_yaml + "\n")
    p = subprocess.run([BIN, "config", "-c", str(config)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_unset_api_key_variable_is_a_config_error(tmp_path, upstream):
    config = tmp_path / "c.yaml"
    config.write_text(CATEGORIES + models_yaml(upstream.url, **{
        "m-none": f'{{base_url: "{upstream.url}", api_key: "${{MCPCLASS_NO_SUCH_VAR}}"}}'}))
    p = subprocess.run([BIN, "route", "--config", str(config), "--http", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30,
                       env={k: v for k, v in os.environ.items() if k != "MCPCLASS_NO_SUCH_VAR"})
    assert p.returncode == 2
    assert "route.models.m-none.api_key: environment variable MCPCLASS_NO_SUCH_VAR is unset" \
        in p.stderr, p.stderr
