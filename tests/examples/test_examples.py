"""The programs of examples/ as a user runs them: real processes, a real socket on 127.0.0.1.

MCPCLASS_EXAMPLES_DIR is the directory of the built examples (ctest sets it: build/examples; the
installed-package check, tests/capi/consumer/run.sh, sets it to the examples built against the
install). Every example reads examples/classifier.yaml.
"""
import http.client
import json
import os
import pathlib
import signal
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN_DIR = pathlib.Path(os.environ.get("MCPCLASS_EXAMPLES_DIR") or ROOT / "build" / "examples")
CONFIG = ROOT / "examples" / "classifier.yaml"
ACCEPT = "application/json, text/event-stream"


def example(name):
    path = BIN_DIR / name
    assert path.is_file(), f"{path} is not built (MCPCLASS_EXAMPLES_DIR={BIN_DIR})"
    return str(path)


@pytest.mark.parametrize("program", ["example_classify", "example_classify_c"])
@pytest.mark.parametrize("text,category", [
    ("What is the derivative of x squared?", "math"),
    ("How long do I bake bread in the oven?", "cooking"),
    ("Tell me about your day", "general"),
])
def test_classify(program, text, category):
    r = subprocess.run([example(program), str(CONFIG), text], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    got, confidence, model, reasoning = r.stdout.split()
    assert got == category
    assert 0 < float(confidence) <= 1
    # The configuration's routing: math has its own model and reasoning, the others the default.
    expected = ("openai/gpt-oss-120b", "reasoning=1") if category == "math" else \
        ("openai/gpt-oss-20b", "reasoning=0")
    assert (model, reasoning) == expected


@pytest.mark.parametrize("program", ["example_classify", "example_classify_c"])
def test_classify_refuses_a_bad_config_naming_the_key(program, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.read_text().replace("  fallback: general", "  fallbak: general"))
    r = subprocess.run([example(program), str(bad), "2 + 2"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert "classifier.fallbak" in r.stderr and r.stdout == ""


def post(conn, body, session=None):
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if session:
        headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", json.dumps(body), headers)
    resp = conn.getresponse()
    data = resp.read().decode()
    if resp.getheader("content-type", "").startswith("text/event-stream"):
        data = "".join(line[5:] for line in data.splitlines() if line.startswith("data:"))
    return resp, json.loads(data) if data.strip() else None


def test_serve_http_answers_mcp_health_and_stops_on_sigterm():
    proc = subprocess.Popen([example("example_serve_http"), str(CONFIG), "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), proc.stderr.read()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        resp, init = post(conn, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}}})
        assert resp.status == 200
        assert init["result"]["serverInfo"]["name"] == "example-classifier"
        session = resp.getheader("mcp-session-id")
        resp, _ = post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        assert resp.status == 202

        _, listed = post(conn, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        names = {t["name"] for t in listed["result"]["tools"]}
        assert {"classify_text", "list_categories", "word_count"} <= names

        _, classified = post(conn, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "classify_text",
            "arguments": {"text": "Solve the equation 3x + 1 = 10"}}}, session)
        assert classified["result"]["structuredContent"]["class"] == 0  # math, the first category

        _, counted = post(conn, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "word_count", "arguments": {"text": "  three  small\twords "}}}, session)
        assert counted["result"]["content"][0]["text"] == "3"

        conn.request("GET", "/health")
        health = conn.getresponse()
        document = json.loads(health.read())
        assert health.status == 200
        assert document["categories"] == ["math", "cooking", "general"]
        conn.close()

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("address", ["127.0.0.1:65536", "127.0.0.1", "127.0.0.1:80x"])
def test_serve_http_refuses_a_bad_address(address):
    r = subprocess.run([example("example_serve_http"), str(CONFIG), address], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    assert f"want HOST:PORT with PORT in 0..65535, got '{address}'" in r.stderr
