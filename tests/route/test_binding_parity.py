"""Parity of the three routers: `mcpclass route` (C++), the Go router (bindings/go/examples/router)
and the Python router (bindings/python/examples/router.py), each a real process with the same
configuration and the same fake upstream. Every prompt of prompts.jsonl goes to each of them; the
x-mcpclass-* headers and what the upstream received (model, reasoning fields, messages) must be
identical.

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
HEADERS = ("x-mcpclass-category", "x-mcpclass-model", "x-mcpclass-reasoning",
           "x-mcpclass-confidence")
FIELDS = ("model", "reasoning_effort", "chat_template_kwargs", "messages")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_config(upstream):
    """The embedded default (five categories, keyword rules, the routing policy) with models
    spread over the reasoning families."""
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
                             for i, prompt in enumerate(PROMPTS)]
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
    return ({h: resp.getheader(h) for h in HEADERS}, {f: received.get(f) for f in FIELDS})


def test_python_router_routes_every_prompt(results):
    rows = results["python"]
    assert len(rows) == len(PROMPTS) == 50
    # The prompts reach every family, so the comparison covers each rewrite.
    assert {h["x-mcpclass-model"] for h, _ in rows} >= {"m-openai", "m-vllm", "m-deepseek"}
    for headers, body in rows:
        assert all(headers[h] is not None for h in HEADERS)
        assert headers["x-mcpclass-reasoning"] in ("true", "false")


@pytest.mark.parametrize("name", ["go", "cpp"])
def test_same_decisions_as_python(results, name):
    if name not in results:
        pytest.skip({"go": "go not found",
                     "cpp": f"{BIN} has no route subcommand yet"}[name])
    diffs = [f"{i} {PROMPTS[i]!r}:\n  python {results['python'][i]}\n  {name} {row}"
             for i, row in enumerate(results[name]) if row != results["python"][i]]
    assert not diffs, f"{len(diffs)} of {len(PROMPTS)} differ:\n" + "\n".join(diffs[:10])
