"""Hostile clients against real `mcpclass` processes (issue 15). Run by ctest as
`/usr/bin/python3 -m pytest tests/hostile` with MCPCLASS_BIN set; standard library only.

- 300 POSTs, each naming a distinct unknown method of almost 4 MiB (half of them asking for SSE
  answers only): the server's RSS stays bounded and /metrics stays small;
- 20 SSE-only POSTs with such methods: RSS grows less than 32 MiB, the replay store stays small;
- a YAML alias bomb of under 1 KiB given to `mcpclass list -c`: a ConfigError at once;
- 5,000 slow uploads, each declaring 4 MiB and sending 4 KiB: RSS grows with what arrived, not
  with what was declared; /health answers at once; read_timeout then cuts every one;
- a client holding every GET stream, then frozen (SIGSTOP): its streams are cut by the heartbeat
  and the write timeout, and a new client's stream succeeds.
"""
import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")
MIB = 1024 * 1024


def rules_server(tmp_path, http_settings=None, server_settings=None):
    document = json.loads(subprocess.run([BIN, "config"], check=True, capture_output=True,
                                         text=True).stdout)
    document["classifier"]["kind"] = "rules"
    document.setdefault("server", {}).update(server_settings or {})
    if http_settings:
        document.setdefault("server", {}).setdefault("http", {}).update(http_settings)
    cfg = tmp_path / "rules.json"
    cfg.write_text(json.dumps(document))
    return procs.Server([BIN, "serve", "--http", "127.0.0.1:0", "--config", str(cfg)],
                        ready=r"on http://127\.0\.0\.1:(\d+)/mcp")


def post_unknown(conn, sid, i, size, sse_only):
    method = f"hostile/{i}/" + "m" * (size - 32)
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": method})
    conn.request("POST", "/mcp", body=body, headers={
        "Content-Type": "application/json",
        "Accept": "text/event-stream" if sse_only else "application/json, text/event-stream",
        "Mcp-Session-Id": sid, "MCP-Protocol-Version": procs.PROTOCOL_VERSION})
    r = conn.getresponse()
    text = r.read().decode()
    assert r.status == 200, text[:200]
    answer = procs.mcp_answer({k.lower(): v for k, v in r.getheaders()}, text)
    assert answer["error"]["code"] == -32601
    assert len(text) < 4096, "the error quotes the whole method name"


def test_unknown_methods_neither_grow_memory_nor_metrics(tmp_path):
    server = rules_server(tmp_path)
    try:
        sid = procs.open_session(server.port)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        size = 4 * MIB - 1024  # under the default max_body_bytes (4 MiB)
        for i in range(4):  # the allocator's working set for 4 MiB bodies
            post_unknown(conn, sid, i, size, sse_only=i % 2 == 1)
        before = procs.rss_kib(server.pid)
        for i in range(4, 304):
            post_unknown(conn, sid, i, size, sse_only=i % 2 == 1)
        grown_mib = (procs.rss_kib(server.pid) - before) / 1024
        status, _, metrics = procs.http_request(server.port, "GET", "/metrics")
        assert status == 200
        assert len(metrics) < MIB, len(metrics)
        assert 'mcpclass_rpc_requests_total{method="other"} 304' in metrics
        assert grown_mib < 50, f"RSS grew {grown_mib:.0f} MiB over 300 unknown methods"
        assert server.alive()
    finally:
        server.stop()


def test_sse_only_unknown_methods_do_not_fill_the_replay_store(tmp_path):
    server = rules_server(tmp_path)
    try:
        sid = procs.open_session(server.port)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        size = 4 * MIB - 1024
        for i in range(2):  # the allocator's working set for 4 MiB bodies
            post_unknown(conn, sid, i, size, sse_only=True)
        before = procs.rss_kib(server.pid)
        for i in range(2, 22):
            post_unknown(conn, sid, i, size, sse_only=True)
        grown_mib = (procs.rss_kib(server.pid) - before) / 1024
        # A store that kept the bodies grows 80 MiB (20 x 4 MiB). Under 32, not 16: glibc keeps
        # one more 16 MiB heap block now and then (16.03 MiB measured on a build without the
        # defect, 0.03 on most runs), which failed a CI run.
        assert grown_mib < 32, f"RSS grew {grown_mib:.0f} MiB over 20 SSE-only unknown methods"
        assert procs.metric(server.port, "mcpclass_sse_replay_bytes") < 64 * 1024
    finally:
        server.stop()


def alias_bomb():
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\ncategories: *a9\n"


def test_yaml_alias_bomb_is_refused_at_once(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    assert bomb.stat().st_size < 1024
    # The timeout only keeps a regression from hanging the suite; the answer is immediate.
    r = subprocess.run([BIN, "list", "-c", str(bomb)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "YAML document expands to more than 1000000 nodes" in r.stderr, r.stderr


# Opens GET /mcp streams on fresh sessions with a small receive buffer, reads them, then says
# "ready" and keeps reading until it is frozen.
STREAM_HOLDER = textwrap.dedent("""
    import socket, sys, time
    sys.path.insert(0, sys.argv[3])
    from lib import procs
    port, count = int(sys.argv[1]), int(sys.argv[2])
    socks = []
    for _ in range(count):
        sid = procs.open_session(port)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall((f"GET /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n"
                   f"Accept: text/event-stream\\r\\nMcp-Session-Id: {sid}\\r\\n"
                   f"MCP-Protocol-Version: {procs.PROTOCOL_VERSION}\\r\\n\\r\\n").encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 200"), "stream refused"
        s.setblocking(False)
        socks.append(s)
    print("ready", flush=True)
    while True:
        for s in socks:
            try:
                s.recv(65536)
            except BlockingIOError:
                pass
        time.sleep(0.01)
""")


def get_stream_status(port):
    sid = procs.open_session(port)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Accept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n"
                   f"MCP-Protocol-Version: {procs.PROTOCOL_VERSION}\r\n\r\n").encode())
        head = s.recv(4096)
    return int(head.split(b" ", 2)[1])


def test_a_frozen_client_cannot_pin_the_streams(tmp_path):
    streams, write_timeout = 4, 1.0
    # A small send buffer and frequent heartbeats fill the frozen reader's buffers in seconds
    # (with the kernel's autotuned buffers, 15 s heartbeats would take hours).
    server = rules_server(tmp_path, {"max_sse_streams": streams, "sse_heartbeat": 0.02,
                                     "write_timeout": write_timeout, "send_buffer_bytes": 4096})
    holder = subprocess.Popen([sys.executable, "-c", STREAM_HOLDER, str(server.port), str(streams),
                               os.path.join(ROOT, "bench")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert procs.metric(server.port, "mcpclass_sse_streams") == streams
        assert get_stream_status(server.port) == 503  # every slot taken
        holder.send_signal(signal.SIGSTOP)
        frozen = time.monotonic()
        # Heartbeats fill the frozen reader's buffers; then a write waits past write_timeout and
        # the stream is cut. The bound is generous: the buffers take a few seconds to fill.
        assert procs.wait_until(lambda: get_stream_status(server.port) == 200, 30, interval=0.2), \
            "the frozen client still holds every GET stream"
        print(f"a new stream after {time.monotonic() - frozen:.1f} s")
        assert server.alive()
    finally:
        holder.kill()
        holder.wait()
        server.stop()


def test_slow_uploads_neither_grow_memory_nor_block_health(tmp_path):
    # 5,000 connections need descriptors on both sides; the server inherits this limit, so its
    # default max_connections (the limit less 64) admits all of them.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = hard if hard == resource.RLIM_INFINITY else min(hard, 16384)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(limit, 16384)), hard))
    uploads = min(5000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 300)
    assert uploads >= 1000, "too few descriptors for the test"
    read_timeout = 8.0
    server = rules_server(tmp_path, {"read_timeout": read_timeout})
    socks = []
    try:
        before = procs.rss_kib(server.pid)
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"Content-Length: {4 * MIB - 1024}\r\n\r\n").encode()
        started = time.monotonic()
        for _ in range(uploads):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(head + b"[" * 4096)
            socks.append(s)
        opened = time.monotonic() - started
        # Timed once the server holds them all (not while its accept queue drains).
        assert procs.wait_until(lambda: procs.metric(server.port, "mcpclass_http_connections")
                                >= uploads, 60), "the server did not take every upload in"
        t0 = time.monotonic()
        status, _, body = procs.http_request(server.port, "GET", "/health", timeout=10)
        health_s = time.monotonic() - t0
        assert status == 200, body
        grown_mib = (procs.rss_kib(server.pid) - before) / 1024
        print(f"{uploads} slow uploads opened in {opened:.1f} s; /health in {health_s * 1000:.0f} ms;"
              f" RSS +{grown_mib:.0f} MiB")
        assert health_s < 1.0, f"/health took {health_s:.2f} s next to {uploads} slow uploads"
        # What arrived is 4 KiB each (20 MiB for 5,000); declared, 20 GiB.
        assert grown_mib < 200, f"RSS grew {grown_mib:.0f} MiB over {uploads} slow uploads"
        # read_timeout ends each one (the server answers or closes), and the server still serves.
        deadline = time.monotonic() + read_timeout + 30
        for s in socks:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                while s.recv(65536):
                    pass
            except ConnectionResetError:
                pass
            s.close()
        assert procs.http_request(server.port, "GET", "/health")[0] == 200
        assert server.alive()
    finally:
        for s in socks:
            s.close()
        server.stop()
