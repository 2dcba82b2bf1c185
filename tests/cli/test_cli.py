"""Process-level tests of the `mcpclass` CLI: real processes, real sockets on 127.0.0.1.

Run by ctest as `/usr/bin/python3 -m pytest tests/cli` with MCPCLASS_BIN set to the built binary.
Only the standard library is used (http.client, socket, subprocess), plus bench/lib/procs.py.
"""
import http.client
import json
import math
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from lib import procs  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "mcpclass")
MATH_QUERY = "What is the integral of x^2 from 0 to 3?"
URL_RE = re.compile(r"on (https?)://([0-9.]+):(\d+)/mcp")


def run(*args, **kwargs):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, **kwargs)


class Serve:
    """`mcpclass serve ARGS` with stderr collected on a thread; `port` once HTTP is up."""

    def __init__(self, *args, stdin=subprocess.DEVNULL, wait_http=True):
        self.proc = subprocess.Popen([BIN, "serve", *args], stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.stderr_lines = []
        self.port = None
        self._http_up = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()
        if wait_http:
            assert self._http_up.wait(20), "no 'serving ... on http://' line: " + self.stderr()
            self.scheme, _, port = URL_RE.search(self.stderr()).groups()
            self.port = int(port)

    def _pump(self):
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            self.stderr_lines.append(line)
            if URL_RE.search(line):
                self._http_up.set()

    def stderr(self):
        return "".join(self.stderr_lines)

    def wait_for_stderr(self, needle, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if needle in self.stderr():
                return True
            time.sleep(0.05)
        return False

    def finish(self, timeout=15):
        rc = self.proc.wait(timeout)
        self._thread.join(5)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def http_server():
    s = Serve("--http", "127.0.0.1:0")
    yield s
    s.kill()


def request(port, method, path, body=None, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    hdrs = {"Content-Type": "application/json"} if body is not None else {}
    hdrs.update(headers or {})
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    payload = resp.read().decode()
    conn.close()
    return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), payload


def check_math_wire(obj, with_probabilities):
    assert obj["class"] == 0
    assert 0.5 < obj["confidence"] <= 1
    assert isinstance(obj["model"], str) and obj["model"]
    assert isinstance(obj["use_reasoning"], bool)
    if with_probabilities:
        p = obj["probabilities"]
        assert len(p) >= 2 and abs(sum(p) - 1) < 1e-6
        assert max(p) == p[0]
        expected = -sum(x * math.log2(x) for x in p if x > 0)
        assert abs(obj["entropy"] - expected) < 1e-6


# --- one-shot commands ---------------------------------------------------------------------------

def test_classify_prints_math_with_probabilities_and_entropy():
    r = run("classify", "--probabilities", MATH_QUERY)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["category"] == "math"
    check_math_wire(out, with_probabilities=True)


def test_classify_without_probabilities_omits_them():
    r = run("classify", MATH_QUERY)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["category"] == "math" and "probabilities" not in out and "entropy" not in out


@pytest.mark.parametrize("document, key", [
    ("server:\n  max_text_lengthh: 5\n", "server.max_text_lengthh"),
    ("server:\n  max_text_length: -5\n", "server.max_text_length"),
    # Read by the HTTP transport itself, reported the same way.
    ("server:\n  http:\n    port: 70000\n", "server.http.port"),
    ("server:\n  http:\n    auth: {jwt: {issuer: x}}\n", "server.http.auth.jwt.resource"),
])
@pytest.mark.parametrize("command", [["classify", "hello"], ["serve", "--stdio"], ["list"],
                                     ["config"]])
def test_bad_config_exits_2_naming_the_key(tmp_path, document, key, command):
    config = tmp_path / "bad.yaml"
    config.write_text(document)
    r = run(command[0], "--config", str(config), *command[1:], input="")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert key in r.stderr
    assert r.stdout == ""


def test_config_prints_the_effective_document(tmp_path):
    r = run("config")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [c["name"] for c in doc["categories"]] == ["math", "science", "technology", "history",
                                                      "general"]
    assert doc["classifier"]["kind"] == "rules" and "integral*" in doc["classifier"]["rules"]["math"]["keywords"]
    assert doc["server"]["http"] == {"host": "127.0.0.1", "port": 8090}
    # What it prints is a configuration document that reads back the same.
    path = tmp_path / "dump.json"
    path.write_text(r.stdout)
    again = run("config", "--config", str(path))
    assert again.returncode == 0 and json.loads(again.stdout) == doc
    path = tmp_path / "limits.yaml"
    path.write_text("server:\n  http:\n    max_sessions: 7\n    session_idle_timeout: 0.5\n")
    http = json.loads(run("config", "--config", str(path)).stdout)["server"]["http"]
    assert http["max_sessions"] == 7 and http["session_idle_timeout"] == 0.5


def test_serve_applies_the_http_limits_of_the_config(tmp_path):
    path = tmp_path / "limits.yaml"
    path.write_text("server:\n  http:\n    io_threads: 1\n    max_body_bytes: 300\n"
                    "    session_idle_timeout: 0.3\n")
    s = Serve("--http", "127.0.0.1:0", "--config", str(path))
    try:
        port = s.port
        status, _, _ = request(port, "POST", "/mcp/tools/call",
                               {"name": "classify_text", "arguments": {"text": "x" * 400}})
        assert status == 413
        status, _, body = request(port, "POST", "/mcp/tools/call",
                                  {"name": "classify_text", "arguments": {"text": MATH_QUERY}})
        assert status == 200, body
        status, headers, _ = request(port, "POST", "/mcp", {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}},
            headers={"Accept": "application/json, text/event-stream"})
        assert status == 200
        sid = headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        session = {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid}
        assert request(port, "POST", "/mcp", ping, headers=session)[0] == 200
        # Idle longer than 0.3 s (pauses of 0.5 s between pings), the session is evicted.
        deadline = time.time() + 20
        while time.time() < deadline and request(port, "POST", "/mcp", ping, headers=session)[0] == 200:
            time.sleep(0.5)
        assert request(port, "POST", "/mcp", ping, headers=session)[0] == 404
    finally:
        s.kill()
    # io_threads shows in the process's thread count: 3 I/O threads are 2 more than 1.
    counts = []
    for threads in (1, 3):
        path.write_text(f"server:\n  http:\n    io_threads: {threads}\n")
        live = Serve("--http", "127.0.0.1:0", "--config", str(path))
        try:
            counts.append(len(os.listdir(f"/proc/{live.proc.pid}/task")))
        finally:
            live.kill()
    assert counts[1] - counts[0] == 2, counts


def subcommands():
    r = run("--help")
    assert r.returncode == 0
    section = r.stdout.split("Subcommands:", 1)[1]
    names = [line.split()[0] for line in section.splitlines() if line.strip()]
    assert {"classify", "list", "serve"} <= set(names)
    return names


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_on_every_subcommand(flag):
    for name in subcommands():
        r = run(name, flag)
        assert r.returncode == 0, (name, r.stderr)
        assert "Usage:" in r.stdout and name in r.stdout, name


def test_unknown_subcommand_is_a_usage_error():
    r = run("no-such-command")
    assert r.returncode == 2


# --- serve over HTTP -----------------------------------------------------------------------------

def test_ephemeral_port_is_reported_and_served(http_server):
    assert http_server.port and http_server.port != 0
    status, _, body = request(http_server.port, "GET", "/health")
    assert status == 200
    h = json.loads(body)
    assert h["status"] == "ok"
    assert h["categories"][0] == "math" and len(h["categories"]) >= 2
    assert isinstance(h["model"], str) and h["model"]
    assert "index_size" in h
    assert h["tools"] == 2
    assert set(h["transports"]) == {"streamable-http", "sse"}
    assert h["uptime_seconds"] >= 0
    # A second server on port 0 gets a different port.
    other = Serve("--http", "127.0.0.1:0")
    try:
        assert other.port != http_server.port
    finally:
        other.kill()


def test_rules_server_never_maps_libtorch(http_server):
    # Only libmcpclass_torch.so links libtorch (~160 MB of RSS), and only a TorchScript model
    # loads it: a server with the keyword rules has none of it mapped after a classification.
    status, _, body = request(http_server.port, "POST", "/mcp/tools/call",
                              {"name": "classify_text", "arguments": {"text": MATH_QUERY}})
    assert status == 200 and json.loads(body)["isError"] is False
    with open(f"/proc/{http_server.proc.pid}/maps") as maps:
        files = {line.split()[-1] for line in maps if "/" in line}
    assert [f for f in files if "torch" in f or "libc10" in f] == []


def test_learned_native_server_never_maps_libtorch(tmp_path):
    # The default encoder (native USE-lite on oneDNN) serves a learned classifier without
    # libtorch: after an embedding kNN classification nothing of libtorch is mapped.
    cfg = tmp_path / "knn-native.json"
    cfg.write_text(json.dumps({"classifier": {"kind": "embedding_knn", "examples": os.path.join(
        os.path.dirname(__file__), "..", "data", "training_data.csv")}}))
    probe = run("classify", "-c", str(cfg), MATH_QUERY)
    if "needs the learned component" in probe.stderr:
        pytest.skip("built without the learned component")
    assert probe.returncode == 0, probe.stderr  # builds the index (cached) before serving
    s = Serve("--http", "127.0.0.1:0", "-c", str(cfg))
    try:
        status, _, body = request(s.port, "POST", "/mcp/tools/call",
                                  {"name": "classify_text", "arguments": {"text": MATH_QUERY}})
        result = json.loads(body)
        assert status == 200 and result["isError"] is False
        assert json.loads(result["content"][0]["text"])["class"] == 0  # math
        with open(f"/proc/{s.proc.pid}/maps") as maps:
            files = {line.split()[-1] for line in maps if "/" in line}
        assert [f for f in files if "torch" in f or "libc10" in f] == []
        assert [f for f in files if "libdnnl" in f]  # it did run the encoder
    finally:
        s.kill()


def test_wrong_torch_plugin_is_a_clear_error(tmp_path):
    examples = os.path.join(os.path.dirname(__file__), "..", "data", "training_data.csv")
    env = dict(os.environ, MCPCLASS_TORCH_PLUGIN=str(tmp_path / "nowhere" / "libmcpclass_torch.so"))
    # The default encoder is the native USE-lite: a kNN over it never needs the plugin.
    native = tmp_path / "knn-native.json"
    native.write_text(json.dumps({"classifier": {"kind": "embedding_knn", "examples": examples}}))
    r = run("classify", "-c", str(native), MATH_QUERY, env=env)
    if "needs the learned component" in r.stderr:
        pytest.skip("built without the learned component")
    assert r.returncode == 0, r.stderr
    # A TorchScript encoder does.
    cfg = tmp_path / "knn.json"
    cfg.write_text(json.dumps({"classifier": {"kind": "embedding_knn", "examples": examples,
                                              "encoder": "cache:use-lite/encoder.pt"}}))
    r = run("classify", "-c", str(cfg), MATH_QUERY, env=env)
    assert r.returncode == 1, r.stderr
    assert f"{tmp_path}/nowhere/libmcpclass_torch.so (missing)" in r.stderr
    assert "MCPCLASS_TORCH_PLUGIN" in r.stderr


def test_go_router_dialect_transcript(http_server):
    """reference.md section 2, the exact bodies the Semantic Router's Go HTTP client sends."""
    port = http_server.port
    status, _, body = request(port, "POST", "/mcp/initialize", {
        "method": "", "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                 "clientInfo": {"name": "semantic-router", "version": "1.0.0"}}})
    assert status == 200
    init = json.loads(body)
    assert "jsonrpc" not in init and init["protocolVersion"] == "2024-11-05"
    assert "tools" in init["capabilities"]

    status, _, body = request(port, "POST", "/mcp/tools/list", {"method": "", "params": {}})
    assert status == 200
    assert [t["name"] for t in json.loads(body)["tools"]] == ["classify_text", "list_categories"]

    status, _, body = request(port, "POST", "/mcp/tools/call", {
        "method": "", "params": {"name": "classify_text",
                                 "arguments": {"text": MATH_QUERY, "with_probabilities": True}}})
    assert status == 200
    result = json.loads(body)
    assert result["isError"] is False
    check_math_wire(json.loads(result["content"][0]["text"]), with_probabilities=True)

    # Simple style {name, arguments}.
    status, _, body = request(port, "POST", "/mcp/tools/call",
                              {"name": "classify_text", "arguments": {"text": MATH_QUERY}})
    assert status == 200
    check_math_wire(json.loads(json.loads(body)["content"][0]["text"]), with_probabilities=False)

    # EMPTY-body ping: no body at all, no content type.
    status, _, body = request(port, "POST", "/mcp/ping", b"", headers={"Content-Type": ""})
    assert status == 200 and json.loads(body) == {}

    status, _, body = request(port, "POST", "/mcp/resources/list", {"method": "", "params": {}})
    assert status == 200
    assert json.loads(body)["resources"][0]["uri"] == "mcpclass://categories"
    status, _, body = request(port, "POST", "/mcp/prompts/list", {"method": "", "params": {}})
    assert status == 200
    assert "math" in [p["name"] for p in json.loads(body)["prompts"]]


def test_metrics_count_classifications_by_category(http_server):
    port = http_server.port
    queries = [MATH_QUERY, "Solve 3x + 5 = 20 for x", "Compute the derivative of sin(x) * x^2"]
    for q in queries:
        status, _, _ = request(port, "POST", "/mcp/tools/call",
                               {"name": "classify_text", "arguments": {"text": q}})
        assert status == 200
    # A rejected text (empty) is not a classification.
    status, _, body = request(port, "POST", "/mcp/tools/call",
                              {"name": "classify_text", "arguments": {"text": "   "}})
    assert json.loads(body)["isError"] is True
    status, headers, body = request(port, "GET", "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    counts = dict(re.findall(r'^mcpclass_classifications_total\{category="([^"]+)"\} (\d+)$', body,
                             re.M))
    assert "# TYPE mcpclass_classifications_total counter" in body
    assert counts["math"] == str(len(queries)), body
    assert sum(int(v) for v in counts.values()) == len(queries)
    assert set(counts) == set(json.loads(request(port, "GET", "/health")[2])["categories"])


# --- stdio, several transports, shutdown ---------------------------------------------------------

class StdioPeer:
    def __init__(self, serve):
        self.serve = serve

    def send(self, message):
        self.serve.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.serve.proc.stdin.flush()

    def receive(self, timeout=20):
        out = self.serve.proc.stdout
        ready, _, _ = select.select([out], [], [], timeout)
        assert ready, "no answer on stdout; stderr: " + self.serve.stderr()
        line = out.readline()
        assert line, "stdout closed; stderr: " + self.serve.stderr()
        return json.loads(line)

    def call(self, id_, method, params=None):
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}})
        reply = self.receive()
        assert reply["id"] == id_, reply
        return reply

    def initialize(self):
        reply = self.call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "pytest", "version": "1"}})
        assert reply["result"]["serverInfo"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def classify(self, id_):
        reply = self.call(id_, "tools/call", {"name": "classify_text",
                                              "arguments": {"text": MATH_QUERY}})
        check_math_wire(reply["result"]["structuredContent"], with_probabilities=False)


def test_stdio_eof_exits_0_after_answering():
    for _ in range(3):  # exit status races show up only sometimes
        s = Serve("--stdio", stdin=subprocess.PIPE, wait_http=False)
        try:
            peer = StdioPeer(s)
            peer.initialize()
            # Several requests written at once, then EOF: every one is answered before exit.
            for i in range(10, 20):
                peer.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": "classify_text", "arguments": {"text": MATH_QUERY}}})
            s.proc.stdin.close()
            ids = []
            for line in s.proc.stdout:
                ids.append(json.loads(line)["id"])
            assert sorted(ids) == list(range(10, 20))
            assert s.finish() == 0, s.stderr()
            assert "http://" not in s.stderr()  # stdio only: no HTTP listener
        finally:
            s.kill()


def test_stdio_keeps_serving_when_http_port_is_taken():
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    s = Serve("--stdio", "--http", f"127.0.0.1:{port}", stdin=subprocess.PIPE, wait_http=False)
    try:
        assert s.wait_for_stderr("HTTP transport failed to start"), s.stderr()
        assert s.proc.poll() is None
        peer = StdioPeer(s)
        peer.initialize()
        peer.classify(2)
        s.proc.stdin.close()
        assert s.finish() == 0, s.stderr()
    finally:
        s.kill()
        blocker.close()


def test_http_and_stdio_at_once():
    s = Serve("--stdio", "--http", "127.0.0.1:0", stdin=subprocess.PIPE)
    try:
        peer = StdioPeer(s)
        peer.initialize()
        peer.classify(2)
        status, _, body = request(s.port, "GET", "/health")
        assert "stdio" in json.loads(body)["transports"]
        # EOF on stdin does not stop the HTTP transport ...
        s.proc.stdin.close()
        time.sleep(0.3)
        assert s.proc.poll() is None
        assert request(s.port, "GET", "/health")[0] == 200
        # ... SIGTERM does.
        s.proc.send_signal(signal.SIGTERM)
        assert s.finish() == 0, s.stderr()
    finally:
        s.kill()


def test_all_transports_failing_exits_1():
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    try:
        r = run("serve", "--http", f"127.0.0.1:{blocker.getsockname()[1]}")
        assert r.returncode == 1
        assert "HTTP transport failed to start" in r.stderr
    finally:
        blocker.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_requests_answers_them_then_exits_0(tmp_path, sig):
    # Eight multi-megabyte texts on eight connections keep the two I/O threads busy (the rules
    # classifier answers inline) for a good fraction of a second, so the signal lands while
    # requests are in flight.
    config = tmp_path / "big.yaml"
    # The work in flight takes seconds on a busy machine: shutdown_timeout must not be what ends
    # it.
    config.write_text("server:\n  max_text_length: 4000000\n  http: {shutdown_timeout: 120}\n")
    s = Serve("--http", "127.0.0.1:0", "--config", str(config))
    conns = []
    try:
        text = ("integral of x squared times the derivative of cos x " * 80000)[:3900000]
        body = json.dumps({"name": "classify_text", "arguments": {"text": text}}).encode()
        raw = (b"POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/json\r\n"
               + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        before = procs.cpu_seconds(s.proc.pid)
        for _ in range(8):
            conn = socket.create_connection(("127.0.0.1", s.port), timeout=30)
            conn.sendall(raw)
            conns.append(conn)
        # Wait until the server has spent 0.2 s of CPU on them (reading, parsing, classifying).
        deadline = time.time() + 10
        while procs.cpu_seconds(s.proc.pid) - before < 0.2 and time.time() < deadline:
            time.sleep(0.01)
        pending = [c for c in conns if c not in select.select(conns, [], [], 0)[0]]
        s.proc.send_signal(sig)
        assert pending, "every request was answered before the signal: nothing was in flight"
        statuses = {}
        for conn in conns:
            response = b""
            try:
                while b"\r\n\r\n" not in response or len(response) < response_length(response):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    response += chunk
            except ConnectionResetError:
                # Only a connection the server had not yet read headers from (still in the accept
                # backlog when the listener closed) may be reset; counted, never a 200.
                statuses[conn] = "reset"
                continue
            head, _, payload = response.partition(b"\r\n\r\n")
            assert len(response) == response_length(response), response[:300]
            status = int(head.split()[1])
            statuses[conn] = status
            # Answered in full: the classification, or (a request whose body was still being
            # read when the drain began) a clean 503 "shutting down".
            assert status in (200, 503), response[:300]
            if status == 200:
                result = json.loads(payload)
                assert result["isError"] is False
                assert json.loads(result["content"][0]["text"])["class"] == 0
        # At least one request that was in flight when the signal came was answered normally.
        assert any(statuses[c] == 200 for c in pending), statuses
        assert s.finish() == 0, s.stderr()
        assert "draining and stopping" in s.stderr()
    finally:
        for conn in conns:
            conn.close()
        s.kill()


def response_length(response):
    head, sep, _ = response.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)content-length: *(\d+)", head)
    return len(head) + len(sep) + (int(m.group(1)) if m else 0)


def test_sigterm_while_idle_exits_0_quickly(http_server):
    # A keep-alive connection sitting idle must not hold up the exit.
    idle = socket.create_connection(("127.0.0.1", http_server.port))
    started = time.time()
    http_server.proc.send_signal(signal.SIGTERM)
    assert http_server.finish() == 0
    assert time.time() - started < 4
    idle.close()


# --- HTTPS ---------------------------------------------------------------------------------------

def make_pki(directory):
    """A throw-away CA and a server certificate it signed for IP:127.0.0.1 and DNS:localhost."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True,
                       timeout=60)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=mcpclass-cli-test-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-new", *ec, "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=localhost")
    (directory / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                          "extendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", "server.pem", "-extfile", "server.ext")
    return {name: str(directory / name) for name in ("ca.pem", "server.pem", "server.key")}


def https_request(port, ca, method, path, body=None):
    context = ssl.create_default_context(cafile=ca)
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=context)
    data = None if body is None else json.dumps(body)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    payload = resp.read().decode()
    conn.close()
    return resp.status, payload


def test_serve_https_with_tls_flags(tmp_path):
    pki = make_pki(tmp_path)
    s = Serve("--http", "127.0.0.1:0", "--tls-cert", pki["server.pem"], "--tls-key",
              pki["server.key"])
    try:
        assert s.scheme == "https", s.stderr()
        status, body = https_request(s.port, pki["ca.pem"], "GET", "/health")
        assert status == 200 and json.loads(body)["status"] == "ok"
        status, body = https_request(s.port, pki["ca.pem"], "POST", "/mcp/tools/call",
                                     {"name": "classify_text", "arguments": {"text": MATH_QUERY}})
        assert status == 200
        check_math_wire(json.loads(body)["structuredContent"], with_probabilities=False)

        # Our own client: verified with --ca-file, refused without it (a clear message).
        url = f"https://127.0.0.1:{s.port}/mcp"
        r = run("call", url, "--ca-file", pki["ca.pem"], "classify_text", f"text={MATH_QUERY}")
        assert r.returncode == 0, r.stderr
        check_math_wire(json.loads(r.stdout)["structuredContent"], with_probabilities=False)
        r = run("classify", "--remote", f"https://localhost:{s.port}/sse", "--ca-file",
                pki["ca.pem"], MATH_QUERY)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["category"] == "math"
        r = run("call", url, "classify_text", "text=hi")
        assert r.returncode == 1
        assert f"TLS certificate verification failed for https://127.0.0.1:{s.port}" in r.stderr

        # Plain HTTP on the HTTPS port: that connection fails, the server keeps serving.
        with pytest.raises((http.client.HTTPException, ConnectionError)):
            request(s.port, "GET", "/health", timeout=10)
        status, _ = https_request(s.port, pki["ca.pem"], "GET", "/health")
        assert status == 200

        s.proc.send_signal(signal.SIGTERM)
        assert s.finish() == 0
    finally:
        s.kill()


def test_https_from_the_config_document_and_a_remote_classifier_with_ca_file(tmp_path):
    pki = make_pki(tmp_path)
    config = tmp_path / "tls.yaml"
    config.write_text("server:\n  http:\n    host: 127.0.0.1\n    port: 0\n    tls:\n"
                      f"      cert_file: {pki['server.pem']}\n"
                      f"      key_file: {pki['server.key']}\n")
    s = Serve("--config", str(config))
    try:
        assert s.scheme == "https", s.stderr()
        remote = tmp_path / "remote.yaml"
        remote.write_text("classifier:\n  kind: remote\n  remote:\n"
                          f"    url: https://127.0.0.1:{s.port}/mcp\n"
                          f"    ca_file: {pki['ca.pem']}\n")
        r = run("classify", "--config", str(remote), MATH_QUERY)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["category"] == "math"
    finally:
        s.kill()


def test_unusable_tls_files_are_clear_errors(tmp_path):
    pki = make_pki(tmp_path)
    missing = str(tmp_path / "missing.pem")
    r = run("serve", "--http", "127.0.0.1:0", "--tls-cert", missing, "--tls-key",
            pki["server.key"])
    assert r.returncode == 1
    assert f"cannot read the certificate chain file '{missing}'" in r.stderr
    r = run("serve", "--http", "127.0.0.1:0", "--tls-cert", pki["server.pem"])
    assert r.returncode == 2 and "--tls-key" in r.stderr
    config = tmp_path / "half.yaml"
    config.write_text(f"server:\n  http:\n    tls: {{cert_file: {pki['server.pem']}}}\n")
    r = run("serve", "--config", str(config))
    assert r.returncode == 2 and "server.http.tls" in r.stderr


@pytest.fixture
def oauth_server():
    """tests/client/oauth_classifier_server.py: a REST-dialect classifier behind OAuth 2.1."""
    script = os.path.join(os.path.dirname(__file__), "..", "client", "oauth_classifier_server.py")
    proc = subprocess.Popen([sys.executable, script], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    yield f"http://127.0.0.1:{port}"
    proc.kill()
    proc.wait()


def test_oauth_flags_reach_a_protected_server(oauth_server):
    url = oauth_server + "/mcp"
    # Without credentials the server's 401 ends in a clear failure, not a hang.
    r = run("classify", "--remote", url, "--transport", "rest", "--retries", "0", MATH_QUERY)
    assert r.returncode == 1, r.stderr
    assert "HTTP 401" in r.stderr, r.stderr
    # Client credentials from the flags, the secret from the environment.
    env = dict(os.environ, ROUTER_SECRET="router-secret")
    r = run("classify", "--remote", url, "--transport", "rest", "--oauth-client-id", "router",
            "--oauth-client-secret", "${ROUTER_SECRET}", MATH_QUERY, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["category"] == "math"
    r = run("call", url, "classify_text", f"text={MATH_QUERY}", "--transport", "rest",
            "--oauth-client-id", "router", "--oauth-client-secret", "router-secret")
    assert r.returncode == 0, r.stderr
    # A wrong secret: the authorization server's own words, exit 1.
    r = run("classify", "--remote", url, "--transport", "rest", "--retries", "0",
            "--oauth-client-id", "router", "--oauth-client-secret", "wrong", MATH_QUERY)
    assert r.returncode == 1, r.stderr
    assert "unknown client or wrong secret" in r.stderr
    # Flags are validated like classifier.remote.auth, naming the flag.
    r = run("classify", "--remote", url, "--oauth-grant", "password", MATH_QUERY)
    assert r.returncode == 2
    assert "--oauth-grant" in r.stderr, r.stderr
    r = run("call", url, "--oauth-client-secret", "s")
    assert r.returncode == 2
    assert "--oauth-client-id: required for the client_credentials grant" in r.stderr, r.stderr


def test_serve_off_loopback_refuses_without_auth_naming_the_key():
    s = Serve("--http", "0.0.0.0:0", wait_http=False)
    rc = s.finish(30)
    assert rc != 0
    assert "allow_unauthenticated" in s.stderr(), s.stderr()


def test_serve_off_loopback_with_tokens_serves_any_host(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("# one per line\nfirst-token\nsecond-token\n")
    s = Serve("--http", "0.0.0.0:0", "--token-file", str(tokens))
    try:
        call = {"name": "classify_text", "arguments": {"text": "solve the integral of x squared"}}
        named = {"Host": "mcp.example.com"}
        status, _, body = request(s.port, "POST", "/mcp/tools/call", call, named)
        assert status == 401, body
        for token in ("first-token", "second-token"):
            status, _, body = request(s.port, "POST", "/mcp/tools/call", call,
                                      {**named, "Authorization": f"Bearer {token}"})
            assert status == 200, body
            check_math_wire(json.loads(body)["structuredContent"], with_probabilities=False)
        status, _, body = request(s.port, "GET", "/health", headers=named)
        assert (status, json.loads(body)) == (200, {"status": "ok"})
        assert request(s.port, "GET", "/metrics", headers=named)[0] == 401
    finally:
        s.kill()


def test_serve_allow_host_and_unauthenticated_flags(tmp_path):
    s = Serve("--http", "0.0.0.0:0", "--allow-unauthenticated", "--allow-host", "mcp.example.com")
    try:
        assert request(s.port, "GET", "/health", headers={"Host": "mcp.example.com"})[0] == 200
        assert request(s.port, "GET", "/health", headers={"Host": "evil.example"})[0] == 403
    finally:
        s.kill()


def test_the_2026_era_over_http_on_a_server_with_sessions(http_server):
    url = f"http://127.0.0.1:{http_server.port}/mcp"
    r = run("call", url, "classify_text", "text=solve the integral of x squared",
            "--protocol", "2026-07-28")
    assert r.returncode == 0, r.stderr
    check_math_wire(json.loads(r.stdout)["structuredContent"], with_probabilities=False)
    # The remote classifier speaks it too (classifier.remote.protocol from the command line).
    r = run("classify", "--remote", url, "--protocol", "2026-07-28", "Who won the battle of Hastings?")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["class"] == 3  # history
    r = run("call", url, "classify_text", "text=x", "--protocol", "1999-01-01")
    assert r.returncode == 2
    assert "2026-07-28" in r.stderr
    # Both spoke the stateless era: server/discover, no initialize, no session left behind.
    metrics = request(http_server.port, "GET", "/metrics")[2]
    assert re.search(r'mcpclass_rpc_requests_total\{method="server/discover"\} [1-9]', metrics), metrics
    assert 'method="initialize"' not in metrics
    assert re.search(r"^mcpclass_active_sessions 0$", metrics, re.M)


def test_serve_result_cache_counts_in_metrics(tmp_path):
    cfg = tmp_path / "cache.yaml"
    cfg.write_text("server:\n  cache: {entries: 100, ttl: 60}\n")
    s = Serve("--http", "127.0.0.1:0", "--config", str(cfg))
    try:
        call = {"name": "classify_text", "arguments": {"text": "solve the integral of x squared"}}
        for _ in range(3):
            status, _, body = request(s.port, "POST", "/mcp/tools/call", call)
            assert status == 200, body
            check_math_wire(json.loads(body)["structuredContent"], with_probabilities=False)
        metrics = request(s.port, "GET", "/metrics")[2]
        assert "mcpclass_cache_hits_total 2\n" in metrics, metrics
        assert "mcpclass_cache_misses_total 1\n" in metrics
    finally:
        s.kill()


# --- eval ---------------------------------------------------------------------------------------

def test_eval_reports_each_source_and_shape_and_the_worst_source(tmp_path):
    # Any classifier can be evaluated; the default rules need no model. Rows name their source
    # and split (router_queries.jsonl.gz's format); a file without sources counts as one source.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(json.dumps(r) for r in [
        {"text": "What is the integral of x^2 from 0 to 3?", "category": "math",
         "source": "stackexchange", "split": "test"},
        {"text": "Solve the equation 3x + 5 = 20 for x", "category": "math",
         "source": "stackexchange", "split": "test"},
        {"text": "How do I reset the pin of my card", "category": "general",
         "source": "banking77", "split": "test"},
        {"text": "Who won the battle of Hastings in 1066?", "category": "history",
         "source": "banking77", "split": "train"},
    ]) + "\n")
    plain = tmp_path / "plain.csv"
    plain.write_text("text,category\nWhen did the Roman empire fall?,history\n"
                     "Explain photosynthesis in plant cells,science\n")
    out = run("eval", str(mixed), str(plain), "--split", "all", "--latency-samples", "0")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["rows"] == 6
    assert {k: v["rows"] for k, v in summary["sources"].items()} == {
        "stackexchange": 2, "banking77": 2, "plain": 2}
    assert summary["sources"]["stackexchange"]["accuracy"] == 1.0
    assert set(summary["shapes"]) == {"title", "request", "other"}
    assert re.search(r"^worst source by router8 accuracy: \S+", out.stdout, re.M), out.stdout
    assert re.search(r"^stackexchange +2 +1\.0000", out.stdout, re.M), out.stdout


def test_eval_reports_low_confidence_rates_and_out_of_scope_rows(tmp_path):
    # The routing policy's low-confidence rule should catch out-of-scope text, not in-domain
    # text: eval reports how often it fires per slice, and rows labelled "oos" (CLINC150's
    # out-of-scope requests) in a table of their own.
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in [
        {"text": "What is the integral of x^2 from 0 to 3?", "category": "math",
         "source": "clinc150", "split": "test", "label": "utility/calculator"},
        {"text": "blorp the fizzle wug", "category": "general", "source": "clinc150",
         "split": "test", "label": "oos"},
    ]) + "\n")

    def evaluate(routing):
        config = tmp_path / "c.yaml"
        config.write_text(routing)
        out = run("eval", str(rows), "-c", str(config), "--split", "all", "--latency-samples", "0")
        assert out.returncode == 0, out.stderr
        return out.stdout, json.loads(out.stdout.strip().splitlines()[-1])

    text, off = evaluate("routing: {low_confidence: {enabled: false}}\n")
    assert off["low_confidence_rate"] == 0.0
    assert off["out_of_scope"]["clinc150"]["rows"] == 1
    assert re.search(r"^out of scope +rows", text, re.M), text
    text, always = evaluate("routing: {low_confidence: {below: 1.0}}\n")
    assert always["out_of_scope"]["clinc150"]["low_confidence_rate"] == 1.0
    assert always["sources"]["clinc150"]["low_confidence_rate"] > 0
    assert re.search(r"^low confidence \(below routing.low_confidence.below = 1\): ", text,
                     re.M), text
