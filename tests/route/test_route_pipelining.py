"""`mcpclass route` with HTTP/1.1 pipelining (issue 28): a request that arrives on a connection
while the one before it is still at a slow upstream is kept and answered after it, in order; the
first request is not cancelled. Pipelined requests larger than the read buffer (max_header_bytes)
wait in TCP until the first answer is written."""

import json
import os
import socket
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from test_route import Route, ask, models_yaml  # noqa: E402,F401
from test_route import route, upstream  # noqa: E402,F401  (fixtures)


def post(port, body):
    data = json.dumps(body).encode()
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data


def read_response(f):
    """One response with a Content-Length body from the file `f`: (status, headers, body); status
    0 when the connection ended first."""
    status_line = f.readline()
    if not status_line:
        return 0, {}, b""
    headers = {}
    while True:
        line = f.readline().rstrip(b"\r\n")
        if not line:
            break
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = f.read(int(headers.get("content-length", "0")))
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("padding", [0, 64 * 1024])
def test_a_pipelined_request_is_answered_after_the_one_in_flight(route, upstream, padding):
    first = ask("what is the integral of x squared", fake={"head_delay": 1.0})
    second = ask("when did the roman empire fall" + " again" * (padding // 6))
    with socket.create_connection(("127.0.0.1", route.port), timeout=20) as s:
        s.sendall(post(route.port, first))
        upstream.wait_for(lambda rs: len(rs) == 1)  # the first is at the (slow) upstream
        s.sendall(post(route.port, second))
        f = s.makefile("rb")
        answers = [read_response(f), read_response(f)]
    assert [a[0] for a in answers] == [200, 200], answers
    assert json.loads(answers[0][2])["choices"][0]["message"]["content"] == "answer from m-openai"
    assert json.loads(answers[1][2])["choices"][0]["message"]["content"] == "answer from Qwen/Qwen3-8B"
    records = upstream.wait_for(lambda rs: len(rs) == 2 and all(r["done"] for r in rs))
    assert not any(r["disconnected"] for r in records), records
