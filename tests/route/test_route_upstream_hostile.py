"""`mcpclass route` against a hostile upstream (issue 28), over real sockets: a chunk-size line or
a trailer section that never ends (bounded by max_header_bytes, 502, RSS), a request the
upstream received and then hung on or closed (never sent twice; 504 / 502), interim 1xx answers
(skipped; a 101 is a 502), and repeated header lines (every one forwarded)."""

import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from raw_upstream import ENDLESS, RawUpstream, send_endless  # noqa: E402
from test_route import Route, ask, models_yaml  # noqa: E402


def answer_bytes(status_line=b"HTTP/1.1 200 OK", headers=b""):
    body = json.dumps({
        "id": "chatcmpl-raw", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "raw answer"}}]}).encode()
    return (status_line + b"\r\nContent-Type: application/json\r\n" + headers +
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.fixture
def raw(request):
    ups = []

    def make(answer):
        up = RawUpstream(answer).start()
        ups.append(up)
        return up

    yield make
    for up in ups:
        up.stop()


@pytest.fixture
def route_for(tmp_path):
    routes = []

    def make(url, model_options="", route_options=""):
        yaml = models_yaml(url, **{"m-openai": f'{{base_url: "{url}", reasoning: openai'
                                               f'{model_options}}}'})
        r = Route(tmp_path, yaml + route_options)
        routes.append(r)
        return r

    yield make
    for r in routes:
        assert r.stop() == 0



@pytest.mark.parametrize("kind", sorted(ENDLESS))
def test_endless_chunk_line_or_trailer_is_bounded(raw, route_for, kind):
    head, filler = ENDLESS[kind]

    def answer(sock, index):
        if index == 0:
            sock.sendall(answer_bytes())
            return True
        send_endless(sock, head, filler)
        return False

    up = raw(answer)
    r = route_for(up.url)
    assert r.post(ask("algebra"))[0] == 200  # warms the allocator and the kept connection
    before = peak_rss_kib(r.proc.pid)
    status, headers, body = r.post(ask("algebra"))
    grown_mib = (peak_rss_kib(r.proc.pid) - before) / 1024
    assert status == 502, body
    err = json.loads(body)["error"]
    assert err["code"] == "upstream_unavailable", err
    assert "max_header_bytes" in err["message"], err
    assert grown_mib < 32, f"route's peak RSS grew {grown_mib:.0f} MiB"


@pytest.mark.parametrize("close", [False, True], ids=["hangs", "closes"])
def test_a_received_request_is_never_sent_twice(raw, route_for, close):
    """On a kept connection: the upstream reads the second request, then hangs (504 after the
    route's timeout) or closes without answering (502). Either way it saw it once."""
    holder = {}

    def answer(sock, index):
        if index == 0:
            sock.sendall(answer_bytes())
            return True
        if not close:
            holder["up"].stopping.wait(30)
        return False

    up = raw(answer)
    holder["up"] = up
    # One server I/O thread (upstream exchanges run on the client connection's): the second
    # request takes the first one's kept connection.
    r = route_for(up.url, ", timeout: 2", "  keep_alive_connections: 4\n"
                  "server:\n  http:\n    io_threads: 1\n")
    assert r.post(ask("algebra"))[0] == 200
    status, headers, body = r.post(ask("algebra"))
    assert status == (502 if close else 504), body
    err = json.loads(body)["error"]
    assert err["code"] == ("upstream_unavailable" if close else "upstream_timeout"), err
    time.sleep(1.0)  # a retry would have reached the upstream by now
    requests = up.requests()
    assert len(requests) == 2, f"the upstream saw {len(requests)} requests for 2"
    assert requests[0][0] == requests[1][0], "the second request did not reuse the connection"


def test_a_kept_connection_the_upstream_closed_is_replaced(raw, route_for):
    """The upstream closes each connection right after its answer: the next request notices
    before writing and takes a new connection (one upstream request per client request)."""
    def answer(sock, index):
        sock.sendall(answer_bytes())
        return False

    up = raw(answer)
    r = route_for(up.url, "", "  keep_alive_connections: 4\nserver:\n  http:\n    io_threads: 1\n")
    for _ in range(3):
        assert r.post(ask("algebra"))[0] == 200
        time.sleep(0.2)  # the close reaches the route's kept connection
    requests = up.requests()
    assert len(requests) == 3
    assert len({number for number, _, _ in requests}) == 3


def test_interim_answers_are_skipped(raw, route_for):
    def answer(sock, index):
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n"
                     b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
                     answer_bytes(headers=b"X-Final: yes\r\n"))
        return True

    up = raw(answer)
    r = route_for(up.url)
    status, headers, body = r.post(ask("algebra"))
    assert status == 200, body
    assert headers.get("x-final") == "yes" and "link" not in headers
    assert json.loads(body)["choices"][0]["message"]["content"] == "raw answer"


def test_a_101_answer_is_a_502(raw, route_for):
    def answer(sock, index):
        sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\n\r\n")
        return False

    up = raw(answer)
    r = route_for(up.url)
    status, headers, body = r.post(ask("algebra"))
    assert status == 502, body
    assert "101" in json.loads(body)["error"]["message"]


def test_repeated_upstream_headers_are_all_forwarded(raw, route_for):
    def answer(sock, index):
        sock.sendall(answer_bytes(headers=b"Set-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\n"
                                  b"Warning: 199 - one\r\nWarning: 199 - two\r\n"))
        return True

    up = raw(answer)
    r = route_for(up.url)
    c = r.conn()
    c.request("POST", "/v1/chat/completions", body=json.dumps(ask("algebra")),
              headers={"Content-Type": "application/json"})
    resp = c.getresponse()
    resp.read()
    c.close()
    assert resp.status == 200
    assert resp.msg.get_all("Set-Cookie") == ["a=1; Path=/", "b=2"]
    assert resp.msg.get_all("Warning") == ["199 - one", "199 - two"]
