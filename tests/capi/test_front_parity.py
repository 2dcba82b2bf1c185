"""One HTTP front for every entry point: `mcpclass serve` (a subprocess) and a server embedded
through the C ABI (mcpc_server_start_http, here through the Python binding's ctypes wrapper) run
the same configuration and get the same requests; their GET /health documents (less
uptime_seconds) and the series of their GET /metrics (names and label sets) must be identical.

Environment: MCPCLASS_BIN (default build/mcpclass of this checkout), MCPCLASS_LIBRARY (default
build/capi/libmcpclass.so next to MCPCLASS_BIN), PYTHONPATH with bindings/python (set here when
missing).
"""

import http.client
import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("MCPCLASS_BIN") or str(ROOT / "build" / "mcpclass")
os.environ.setdefault("MCPCLASS_LIBRARY",
                      str(pathlib.Path(BIN).resolve().parent / "capi" / "libmcpclass.so"))
sys.path.insert(0, str(ROOT / "bindings" / "python"))
import mcpclass  # noqa: E402

# Fields of /health that change between two reads of the same server.
VOLATILE = {"uptime_seconds"}
SERIES = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def config_text():
    """The embedded default (keyword rules, five categories) with a result cache, so the cache
    series are part of the comparison; no file watcher."""
    out = subprocess.run([BIN, "config"], capture_output=True, text=True, timeout=60, check=True)
    doc = json.loads(out.stdout)
    doc["server"]["cache"] = {"entries": 64}
    doc["server"]["reload"] = {"watch": False}
    return json.dumps(doc)


def exercise(port):
    """The same requests to either server: classifications (one repeated, a cache hit), a list
    of the categories; returns its /health document and /metrics series."""
    for text in ("What is the integral of x squared?", "Who won the battle of Hastings?",
                 "What is the integral of x squared?"):
        status, body = request(port, "POST", "/mcp/tools/call",
                               {"name": "classify_text", "arguments": {"text": text}})
        assert status == 200, body
    assert request(port, "POST", "/mcp/tools/call",
                   {"name": "list_categories", "arguments": {}})[0] == 200
    status, body = request(port, "GET", "/health")
    assert status == 200, body
    health = json.loads(body)
    status, body = request(port, "GET", "/metrics")
    assert status == 200, body
    return health, series(body.decode())


def series(text):
    """{(name, ((label, value), ...))} of a Prometheus text page."""
    out = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        assert m, f"not a Prometheus sample: {line!r}"
        out.add((m.group(1), tuple(sorted(LABEL.findall(m.group(2) or "")))))
    return out


@pytest.fixture
def cli_port(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(config_text())
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "-c", str(path), "--http", f"127.0.0.1:{port}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if request(port, "GET", "/health/ready")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "mcpclass serve did not become ready"
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()


def test_health_and_metrics_are_the_same_from_the_cli_and_the_c_abi(cli_port):
    cli_health, cli_series = exercise(cli_port)
    with mcpclass.Server(config=config_text()) as embedded:
        embedded_health, embedded_series = exercise(embedded.start_http("127.0.0.1", 0))
        embedded.stop()

    for volatile in VOLATILE:
        assert volatile in cli_health and volatile in embedded_health
        del cli_health[volatile], embedded_health[volatile]
    assert embedded_health == cli_health
    assert cli_health["categories"] == ["math", "science", "technology", "history", "general"]
    assert embedded_series == cli_series, (
        f"only from serve: {sorted(cli_series - embedded_series)}\n"
        f"only embedded: {sorted(embedded_series - cli_series)}")
    names = {name for name, _ in cli_series}
    for expected in ("mcpclass_classifications_total", "mcpclass_config_generation",
                     "mcpclass_cache_hits_total", "mcpclass_http_requests_total"):
        assert expected in names, sorted(names)
