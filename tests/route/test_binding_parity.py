"""Parity of the three routers: `mcpclass route` (C++), the Go router (bindings/go/examples/router)
and the Python router (bindings/python/examples/router.py), each a real process with the same
configuration and the same fake upstream. The bindings' routers forward what the library's
evaluation (mcpclass.Router) says, so this checks their HTTP side: every prompt of prompts.jsonl,
and a few that the configuration's decisions (over keyword, domain and PII signals, with system
prompt, header mutation and PII redaction plugins) select, goes to each of them; the x-mcpclass-*
headers, the selected decision and what the upstream received (model, reasoning fields,
messages, the mutated header) must be identical.

The Python router is the reference. The Go router is skipped without `go`; `mcpclass route` is
skipped while MCPCLASS_BIN has no `route` subcommand.

Environment: MCPCLASS_BIN (default build/mcpclass of this checkout), MCPCLASS_LIBRARY (the built
libmcpclass.so; default next to MCPCLASS_BIN in capi/), the Go settings of the binding test
(PKG_CONFIG_PATH, GOFLAGS, GOCACHE, ...) when run from ctest.
"""

import copy
import http.client
import json
import os
import re
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from fake_upstream import FakeUpstream  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or str(ROOT / "build" / "mcpclass")
LIBRARY = os.environ.get("MCPCLASS_LIBRARY") or str(
    pathlib.Path(BIN).resolve().parent / "capi" / "libmcpclass.so")
PROMPTS = [json.loads(line)["prompt"] for line in (HERE / "prompts.jsonl").read_text().splitlines()
           if line.strip()]
# Prompts the decisions select (PII, keywords), after prompts.jsonl's.
DECISION_PROMPTS = [
    "Please email jane.doe@example.com the eigenvalues of [[2, 1], [1, 2]].",
    "Call me at +1 415 555 0132 about the French Revolution.",
    "urgent: my python script crashes on import",
    "asap: the SQL migration is stuck",
    "How do I write a python decorator?",
    "Who won the battle of Hastings in 1066?",
]
ALL_PROMPTS = PROMPTS + DECISION_PROMPTS
HEADERS = ("x-mcpclass-category", "x-mcpclass-model", "x-mcpclass-reasoning",
           "x-mcpclass-confidence", "x-vsr-selected-decision", "x-vsr-matched-keywords",
           "x-vsr-matched-pii", "x-mcpclass-pii-types")
ROUTED_HEADERS = ("x-mcpclass-model", "x-mcpclass-reasoning", "x-mcpclass-confidence")
FIELDS = ("model", "reasoning_effort", "chat_template_kwargs", "messages")
UPSTREAM_HEADERS = ("x-route-tier",)

# Decisions over keyword, domain and PII signals; prompts no decision selects are routed by the
# classifier's category as before.
ROUTING = {
    "signals": {
        "keywords": [{"name": "urgent", "operator": "OR", "keywords": ["urgent", "asap"]},
                     {"name": "code", "operator": "OR", "keywords": ["python", "sql"]}],
        "domains": [{"name": "history"}],
        "pii": [{"name": "contact", "pii_types_allowed": []}],
    },
    "decisions": [
        {"name": "private", "priority": 300, "rules": {"type": "pii", "name": "contact"},
         "modelRefs": [{"model": "m-none"}],
         "plugins": [{"type": "pii", "configuration": {"action": "redact"}}]},
        {"name": "urgent_code", "priority": 250,
         "rules": {"operator": "AND", "conditions": [{"type": "keyword", "name": "urgent"},
                                                     {"type": "keyword", "name": "code"}]},
         "modelRefs": [{"model": "m-openai", "use_reasoning": True, "reasoning_effort": "medium"}],
         "plugins": [
             {"type": "system_prompt", "configuration": {
                 "system_prompt": "You are an on-call engineer.", "mode": "replace"}},
             {"type": "header_mutation", "configuration": {
                 "add": [{"name": "X-Route-Tier", "value": "urgent"}]}}]},
        {"name": "code", "priority": 200, "rules": {"type": "keyword", "name": "code"},
         "modelRefs": [{"model": "m-vllm", "use_reasoning": False}],
         "plugins": [{"type": "system_prompt",
                      "configuration": {"system_prompt": "You write code."}}]},
        {"name": "history", "priority": 100, "rules": {"type": "domain", "name": "history"},
         "modelRefs": [{"model": "m-deepseek", "use_reasoning": True}]},
    ],
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_config(upstream):
    """The embedded default (five categories, keyword rules, the routing policy) with models
    spread over the reasoning families, and ROUTING's signals and decisions."""
    out = subprocess.run([BIN, "config"], capture_output=True, text=True, timeout=60, check=True)
    doc = json.loads(out.stdout)
    families = {"math": "m-openai", "science": "m-vllm", "technology": "m-deepseek",
                "history": "m-none"}
    for c in doc["categories"]:
        if c["name"] in families:
            c["model"] = families[c["name"]]
    doc["route"] = {"system_prompt": "replace", "models": {
        "m-openai": {"base_url": upstream, "upstream_model": "gpt-up", "reasoning": "openai"},
        "m-vllm": {"base_url": upstream, "upstream_model": "qwen3-up", "reasoning": "vllm"},
        "m-deepseek": {"base_url": upstream, "reasoning": "deepseek"},
        "m-none": {"base_url": upstream},
        doc["routing"]["default_model"]: {"base_url": upstream, "reasoning": "openai",
                                          "reasoning_effort": "medium",
                                          "reasoning_effort_off": "minimal"}}}
    doc["routing"].update(copy.deepcopy(ROUTING))
    return doc


def request_for(i, prompt):
    """Varied request shapes: plain, array content, multi-turn with a system message, stream."""
    messages = [{"role": "user", "content": prompt}]
    if i % 5 == 1:
        head, _, tail = prompt.partition(" ")
        messages = [{"role": "user", "content": [{"type": "text", "text": head},
                                                 {"type": "text", "text": tail}]}]
    elif i % 7 == 2:
        messages = [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Tell me about compilers."},
                    {"role": "assistant", "content": "Sure."}] + messages
    body = {"model": "auto", "temperature": 0.5, "messages": messages,
            "chat_template_kwargs": {"keep": "me"}}
    if i % 11 == 3:
        body["stream"] = True
    return body


class Process:
    def __init__(self, name, argv, env, port):
        self.name, self.port = name, port
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited {self.proc.returncode}: {self.proc.stderr.read()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/v1/models")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name} did not answer GET /v1/models within 60 s")
            time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def has_route():
    if not os.access(BIN, os.X_OK):
        return False
    # `mcpclass route --help` succeeds even without the subcommand (it prints the main help), so
    # look for it in the list of subcommands.
    r = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=30)
    return re.search(r"^\s+route\s", r.stdout, re.M) is not None


def go_router(tmp, env):
    go = shutil.which("go")
    if not go:
        return None
    genv = dict(env)
    libdir = str(pathlib.Path(LIBRARY).resolve().parent)
    genv.setdefault("PKG_CONFIG_PATH", os.path.join(libdir, "pkgconfig"))
    for k, v in {"CGO_ENABLED": "1", "GOFLAGS": "-mod=mod", "GOPROXY": "off",
                 "GOTOOLCHAIN": "local"}.items():
        genv.setdefault(k, v)
    exe = tmp / "go-router"
    subprocess.run([go, "build", "-o", str(exe), "./examples/router"], cwd=ROOT / "bindings" / "go",
                   env=genv, check=True, timeout=600)
    return exe


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{router name: [(headers, upstream body) per prompt]} for every router that can run."""
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"{BIN} not built")
    tmp = tmp_path_factory.mktemp("parity")
    fake = FakeUpstream().start()
    config = tmp / "router.json"
    config.write_text(json.dumps(make_config(fake.url), indent=1))
    env = dict(os.environ, MCPCLASS_LIBRARY=LIBRARY, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=str(ROOT / "bindings" / "python"))
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        filter(None, [str(pathlib.Path(LIBRARY).resolve().parent), env.get("LD_LIBRARY_PATH")]))
    commands = {"python": [sys.executable, str(ROOT / "bindings/python/examples/router.py")]}
    go = go_router(tmp, env)
    if go:
        commands["go"] = [str(go)]
    if has_route():
        commands["cpp"] = [BIN, "route"]
    out = {}
    try:
        for name, argv in commands.items():
            port = free_port()
            p = Process(name, argv + ["--config", str(config), "--http", f"127.0.0.1:{port}"],
                        env, port)
            try:
                out[name] = [send(p.port, fake, request_for(i, prompt))
                             for i, prompt in enumerate(ALL_PROMPTS)]
            finally:
                p.stop()
    finally:
        fake.stop()
    return out


def send(port, fake, body):
    before = len(fake.records())
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    assert resp.status == 200, (resp.status, body)
    records = fake.wait_for(lambda r: len(r) > before)
    received = records[before]["body"]
    upstream = {h: records[before]["headers"].get(h) for h in UPSTREAM_HEADERS}
    return ({h: resp.getheader(h) for h in HEADERS},
            dict({f: received.get(f) for f in FIELDS}, **upstream))


def test_python_router_routes_every_prompt(results):
    rows = results["python"]
    assert len(PROMPTS) == 50 and len(rows) == len(ALL_PROMPTS)
    # The prompts reach every family and every decision, so the comparison covers each rewrite.
    assert {h["x-mcpclass-model"] for h, _ in rows} >= {"m-openai", "m-vllm", "m-deepseek"}
    assert {h["x-vsr-selected-decision"] for h, _ in rows} == {
        None, "private", "urgent_code", "code", "history"}
    for headers, body in rows:
        assert all(headers[h] is not None for h in ROUTED_HEADERS)
        assert headers["x-mcpclass-reasoning"] in ("true", "false")
        if headers["x-vsr-selected-decision"] is None:
            assert headers["x-mcpclass-category"] is not None
    by_decision = {h["x-vsr-selected-decision"]: (h, b) for h, b in rows}
    # PII redacted before it leaves the router; the decision's system prompt and header.
    h, b = by_decision["private"]
    assert "jane.doe@example.com" not in json.dumps(b["messages"]) and h["x-mcpclass-pii-types"]
    h, b = by_decision["urgent_code"]
    assert b["messages"][0] == {"role": "system", "content": "You are an on-call engineer."}
    assert b["x-route-tier"] == "urgent" and b["reasoning_effort"] == "medium"


@pytest.mark.parametrize("name", ["go", "cpp"])
def test_same_decisions_as_python(results, name):
    if name not in results:
        pytest.skip({"go": "go not found",
                     "cpp": f"{BIN} has no route subcommand yet"}[name])
    diffs = [f"{i} {ALL_PROMPTS[i]!r}:\n  python {results['python'][i]}\n  {name} {row}"
             for i, row in enumerate(results[name]) if row != results["python"][i]]
    assert not diffs, f"{len(diffs)} of {len(ALL_PROMPTS)} differ:\n" + "\n".join(diffs[:10])
