"""Processes for the benchmarks and the load tests: servers started on ephemeral ports, their
resident memory, and HTTP/MCP helpers (standard library only)."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

PROTOCOL_VERSION = "2025-06-18"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    """VmRSS of a process, KiB (-1 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Server:
    """A server process whose stderr announces its address; `port` is parsed from the line
    matching `ready` (a regex whose group 1 is the port), or given."""

    def __init__(self, argv, ready=r"http://127\.0\.0\.1:(\d+)", port=None, env=None,
                 timeout=60, stdin=subprocess.DEVNULL):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env, start_new_session=True)
        self.lines = []
        self.port = port
        found = threading.Event()
        pattern = re.compile(ready) if ready else None

        def pump():
            for raw in self.proc.stderr:
                line = raw.decode(errors="replace")
                self.lines.append(line)
                if pattern and not found.is_set():
                    m = pattern.search(line)
                    if m:
                        if self.port is None:
                            self.port = int(m.group(1))
                        found.set()

        self._thread = threading.Thread(target=pump, daemon=True)
        self._thread.start()
        if pattern and not found.wait(timeout):
            self.stop()
            raise RuntimeError(f"{argv[0]} did not start: {self.stderr()}")

    @property
    def pid(self):
        return self.proc.pid

    def stderr(self):
        return "".join(self.lines)

    def rss(self):
        return rss_kib(self.proc.pid)

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(5)
        return self.proc.returncode


class RssSampler:
    """Samples a process's VmRSS every `interval` seconds on a thread; `peak` and `samples`."""

    def __init__(self, pid, interval=0.2):
        self.pid, self.interval = pid, interval
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            v = rss_kib(self.pid)
            if v > 0:
                self.samples.append(v)
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self

    @property
    def peak(self):
        return max(self.samples) if self.samples else -1


def http_request(port, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection: (status, lower-case headers, body text)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = body if body is None or isinstance(body, (bytes, str)) else json.dumps(body)
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


MCP_ACCEPT = "application/json, text/event-stream"


def initialize_request(rid=0):
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                       "clientInfo": {"name": "mcpclass-bench", "version": "0"}}}


def sse_data(body):
    """The JSON messages of an SSE body (data lines of each event)."""
    out = []
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(l[5:].lstrip(" ") for l in event.split("\n") if l.startswith("data:"))
        if data:
            out.append(json.loads(data))
    return out


def mcp_answer(headers, body):
    if headers.get("content-type", "").startswith("text/event-stream"):
        messages = sse_data(body)
        return messages[-1] if messages else None
    return json.loads(body) if body else None


def open_session(port, path="/mcp"):
    """initialize + notifications/initialized over Streamable HTTP; returns the session id."""
    status, headers, body = http_request(port, "POST", path, initialize_request(),
                                         {"Accept": MCP_ACCEPT})
    if status != 200 or "mcp-session-id" not in headers:
        raise RuntimeError(f"initialize on :{port}{path} failed: {status} {body[:300]}")
    sid = headers["mcp-session-id"]
    status, _, body = http_request(port, "POST", path,
                                   {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                   {"Accept": MCP_ACCEPT, "Mcp-Session-Id": sid,
                                    "MCP-Protocol-Version": PROTOCOL_VERSION})
    if status not in (200, 202):
        raise RuntimeError(f"initialized on :{port}{path} failed: {status} {body[:300]}")
    return sid


def tools_call(rid, text, with_probabilities=False):
    args = {"text": text}
    if with_probabilities:
        args["with_probabilities"] = True
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "classify_text", "arguments": args}}


def classify_over_http(port, sid, text, path="/mcp", with_probabilities=False, rid=1):
    """The structured result of classify_text over a session (JSON or SSE answer)."""
    status, headers, body = http_request(
        port, "POST", path, tools_call(rid, text, with_probabilities),
        {"Accept": MCP_ACCEPT, "Mcp-Session-Id": sid, "MCP-Protocol-Version": PROTOCOL_VERSION})
    if status != 200:
        raise RuntimeError(f"tools/call on :{port}{path}: {status} {body[:300]}")
    answer = mcp_answer(headers, body)
    result = answer.get("result") if answer else None
    if not result or result.get("isError"):
        raise RuntimeError(f"tools/call on :{port}{path}: {body[:300]}")
    return result["structuredContent"], body, headers


def metric(port, name):
    """A gauge or counter without labels from GET /metrics (AssertionError when absent)."""
    _, _, body = http_request(port, "GET", "/metrics")
    m = re.search(rf"^{name} (\d+)", body, re.M)
    assert m, f"{name} not in /metrics"
    return int(m.group(1))


def wait_until(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
