"""A fake OpenAI-compatible upstream for the route tests: it records every request it receives
and answers POST <prefix>/chat/completions like a chat model would, as JSON or as an SSE stream.

A request steers its own answer with an extra body field the router forwards untouched:
    "fake": {"chunks": 5, "delay": 0.2, "status": 200, "error": "...", "close": false}
  chunks  SSE chunks for stream: true (default 3), each after `delay` seconds (default 0)
  status  answer with this status and an OpenAI error body carrying `error`
  close   close the connection without answering
  head_delay  seconds to wait before the status line (a slow upstream)

Records (one per request, in arrival order): {"id", "path", "headers" (lower-case), "body",
"conn" (the connection's number: reused connections share it), "done" (the answer was written to
the end), "disconnected" (a write failed: the client went away mid-answer)}.

`up.fake` (default {}) holds the same fields for every request (a request's own override them),
so one upstream of a pool can answer 5xx while its peers answer 200; GET <anything>/health
answers 200, or `up.fake["status"]` when it is set (an active health check's view).

In-process: `up = FakeUpstream(); up.start(); ... up.records(); up.stop()`.
As a process: `python3 fake_upstream.py` prints its port on stdout; GET /_records returns the
records, DELETE /_records clears them.
"""

import http.server
import itertools
import json
import socketserver
import ssl
import sys
import threading
import time


class FakeUpstream:
    def __init__(self, host="127.0.0.1", port=0, tls=None):
        """`tls`: (certificate chain file, key file) to serve HTTPS."""
        self._records = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._conn_ids = itertools.count(1)
        self.fake = {}
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                self.conn = next(upstream._conn_ids)

            def log_message(self, *args):
                pass

            def _send_json(self, status, obj):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/_records":
                    return self._send_json(200, upstream.records())
                if self.path.endswith("/health"):
                    upstream._add({"path": self.path, "conn": self.conn, "health": True})
                    status = int(upstream.fake.get("status", 200))
                    return self._send_json(status, {"status": status})
                self._send_json(404, {"error": {"message": "not found"}})

            def do_DELETE(self):
                if self.path == "/_records":
                    upstream.clear()
                    return self._send_json(200, {})
                self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                record = {"path": self.path, "conn": self.conn, "body": body,
                          "raw": raw.decode("utf-8", "replace"), "done": False,
                          "disconnected": False,
                          "headers": {k.lower(): v for k, v in self.headers.items()}}
                upstream._add(record)
                fake = {**upstream.fake,
                        **(body.get("fake", {}) if isinstance(body, dict) else {})}
                try:
                    self._answer(record, body, fake)
                    upstream._update(record, done=True)
                except (BrokenPipeError, ConnectionResetError):
                    upstream._update(record, disconnected=True)
                    self.close_connection = True

            def _answer(self, record, body, fake):
                if fake.get("close"):
                    self.close_connection = True
                    return
                if fake.get("head_delay"):
                    time.sleep(float(fake["head_delay"]))
                if not record["path"].endswith("/chat/completions"):
                    return self._send_json(404, {"error": {"message": "no such path"}})
                status = int(fake.get("status", 200))
                if status != 200:
                    return self._send_json(status, {"error": {
                        "message": fake.get("error", "upstream error"), "type": "server_error",
                        "param": None, "code": None}})
                model = body.get("model", "") if isinstance(body, dict) else ""
                if not (isinstance(body, dict) and body.get("stream")):
                    return self._send_json(200, {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                        "model": model, "choices": [{
                            "index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": f"answer from {model}"}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                delay = float(fake.get("delay", 0))
                chunks = int(fake.get("chunks", 3))
                for i in range(chunks):
                    if i > 0 and delay > 0:
                        time.sleep(delay)
                    event = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                             "created": 0, "model": model, "choices": [{
                                 "index": 0, "finish_reason": None,
                                 "delta": {"content": f"part{i} "}}]}
                    self._chunk(f"data: {json.dumps(event)}\n\n".encode())
                    upstream._update(record, sent=i + 1)
                if delay > 0:
                    time.sleep(delay)
                last = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "finish_reason": "stop", "delta": {}}]}
                self._chunk(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _chunk(self, data):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server((host, port), Handler)
        self._scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            self._scheme = "https"
        self._thread = None

    @property
    def port(self):
        return self._server.server_address[1]

    @property
    def url(self):
        return f"{self._scheme}://127.0.0.1:{self.port}/v1"

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def _add(self, record):
        with self._cond:
            record["id"] = len(self._records)
            self._records.append(record)
            self._cond.notify_all()

    def _update(self, record, **fields):
        with self._cond:
            record.update(fields)
            self._cond.notify_all()

    def records(self):
        with self._lock:
            return [dict(r) for r in self._records]

    def clear(self):
        with self._lock:
            self._records.clear()

    def wait_for(self, predicate, timeout=10.0):
        """Waits until predicate(records) is true; returns the records (raises on timeout)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._records):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fake upstream: condition not met; records {self._records}")
                self._cond.wait(left)
            return [dict(r) for r in self._records]


if __name__ == "__main__":
    up = FakeUpstream(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0).start()
    print(up.port, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        up.stop()
