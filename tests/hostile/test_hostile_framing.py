"""Hostile request framing against a real `mcpclass serve` (issue 28); standard library only.

- a chunked body whose chunk-size line never ends (an endless chunk extension), or whose trailer
  section never ends: 400 once the read buffer (max_header_bytes) is full, and RSS grows by less
  than 32 MiB, where it used to grow by a gigabyte;
- 100 connections each declaring a 4 MiB body without a token and stalling one byte short: each
  is refused (401) at its header, before its body is read, and RSS grows by less than 32 MiB
  (it used to hold every body: +400 MiB until read_timeout).
"""
import os
import select
import socket
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hostile import MIB, procs, rules_server  # noqa: E402

TOKEN = "framing-token"


def token_server(tmp_path):
    return rules_server(tmp_path, {"auth": {"bearer_tokens": [TOKEN]}, "read_timeout": 60})


def status_of(head):
    """The status code of a response head (bytes), or 0 when there was none."""
    parts = head.split(b" ", 2)
    return int(parts[1]) if head.startswith(b"HTTP/1.1 ") and len(parts) > 1 else 0


def read_answer(sock, deadline=None):
    """What the server sends until it closes, or until `deadline` (time.monotonic(); default in
    20 s): the server's read_timeout is 60 s, so a server still waiting for a body says nothing."""
    deadline = deadline or time.monotonic() + 20
    out = b""
    try:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = sock.recv(65536)
            if not data:
                break
            out += data
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def flood(sock, prefix, filler, limit):
    """Sends `prefix`, then `filler` until `limit` bytes went out or the server answered (or
    closed). Returns the bytes sent."""
    sock.sendall(prefix)
    sent = len(prefix)
    piece = filler * (64 * 1024 // len(filler))
    while sent < limit:
        if select.select([sock], [], [], 0)[0]:
            break  # an answer, or EOF
        try:
            sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(piece)
    return sent


CHUNKED_HEAD = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                "Transfer-Encoding: chunked\r\n\r\n")


@pytest.mark.parametrize("variant,prefix,filler", [
    ("chunk extension", "1;x=", b"a"),
    ("trailer section", "1\r\n[\r\n0\r\n", b"X-Trailer: " + b"b" * 64 + b"\r\n"),
])
def test_endless_chunk_framing_is_cut_at_the_buffer_bound(tmp_path, variant, prefix, filler):
    # The token is valid: the framing itself, not the token check, must stop the flood.
    server = token_server(tmp_path)
    try:
        before = procs.rss_kib(server.pid)
        sampler = procs.RssSampler(server.pid, interval=0.05)
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
            sent = flood(s, (CHUNKED_HEAD.format(port=server.port) + prefix).encode(), filler,
                         128 * MIB)
            answer = read_answer(s)
        grown_mib = (sampler.stop().peak - before) / 1024
        print(f"{variant}: {sent / MIB:.1f} MiB sent; RSS +{grown_mib:.1f} MiB; "
              f"{answer[:60]!r}")
        assert grown_mib < 32, f"RSS grew {grown_mib:.0f} MiB on one {variant}"
        assert status_of(answer) == 400, answer[:300]
        assert b"exceeds 16384 bytes" in answer, answer[:300]
        assert b"Connection: close" in answer, answer[:300]
        assert procs.http_request(server.port, "GET", "/health")[0] == 200
    finally:
        server.stop()


def declared_upload(port, extra=""):
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {4 * MIB}\r\n\r\n").encode()


@pytest.mark.parametrize("extra,status", [
    ("", 401),
    ("Authorization: Bearer wrong\r\n", 401),
    (f"Authorization: Bearer {TOKEN}\r\nOrigin: http://evil.example\r\n", 403),
])
def test_a_refused_request_is_answered_before_its_body(tmp_path, extra, status):
    server = token_server(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
            s.sendall(declared_upload(server.port, extra))  # and no byte of the body
            answer = read_answer(s)
        assert status_of(answer) == status, answer[:300]
        assert b"Connection: close" in answer, answer[:300]
    finally:
        server.stop()


def test_bodies_without_a_token_are_not_read(tmp_path):
    server = token_server(tmp_path)
    socks = []
    try:
        before = procs.rss_kib(server.pid)
        sampler = procs.RssSampler(server.pid)
        body = b"[" * (4 * MIB - 1)  # one byte short: the server would wait for the last one
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
            socks.append(s)
            try:
                s.sendall(declared_upload(server.port) + body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused and closed while the body was on its way
        deadline = time.monotonic() + 20
        answers = [read_answer(s, deadline) for s in socks]
        grown_mib = (sampler.stop().peak - before) / 1024
        print(f"100 stalled 4 MiB uploads without a token: RSS +{grown_mib:.1f} MiB")
        assert grown_mib < 32, f"RSS grew {grown_mib:.0f} MiB over 100 unauthorized uploads"
        assert [status_of(a) for a in answers] == [401] * 100, answers[0][:300]
        assert server.alive()
    finally:
        for s in socks:
            s.close()
        server.stop()
