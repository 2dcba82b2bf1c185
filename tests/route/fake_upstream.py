"""A fake model server for the route tests: it records every request it receives and answers
POST <prefix>/chat/completions and <prefix>/responses like an OpenAI model would, and
<prefix>/messages like an Anthropic one, each in its API's shapes, as JSON or as an SSE stream
(`stream: true`): chat completion chunks ending in [DONE]; Responses events (response.created,
response.output_text.delta..., response.completed); Anthropic events (message_start,
content_block_start, content_block_delta..., content_block_stop, message_delta, message_stop).
Errors come in the API's error shape.

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
                path = record["path"]
                api = ("messages" if path.endswith("/messages") else
                       "responses" if path.endswith("/responses") else
                       "chat" if path.endswith("/chat/completions") else None)
                if api is None:
                    return self._send_json(404, {"error": {"message": "no such path"}})
                status = int(fake.get("status", 200))
                if status != 200:
                    message = fake.get("error", "upstream error")
                    if api == "messages":
                        return self._send_json(status, {"type": "error", "error": {
                            "type": "api_error", "message": message}})
                    return self._send_json(status, {"error": {
                        "message": message, "type": "server_error", "param": None,
                        "code": None}})
                model = body.get("model", "") if isinstance(body, dict) else ""
                if api != "chat":
                    return self._answer_api(record, body, fake, api, model)
                if not (isinstance(body, dict) and body.get("stream")):
                    return self._send_json(200, {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                        "model": model, "choices": [{
                            "index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": f"answer from {model}"}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}})
                delay, chunks = self._begin_stream(fake)
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

            def _answer_api(self, record, body, fake, api, model):
                text = f"answer from {model}"
                if api == "messages":
                    message = {"id": "msg_fake", "type": "message", "role": "assistant",
                               "model": model, "content": [{"type": "text", "text": text}],
                               "stop_reason": "end_turn", "stop_sequence": None,
                               "usage": {"input_tokens": 1, "output_tokens": 3}}
                else:
                    item = {"type": "message", "id": "msg_fake", "status": "completed",
                            "role": "assistant", "content": [
                                {"type": "output_text", "text": text, "annotations": []}]}
                    response = {"id": "resp_fake", "object": "response", "created_at": 0,
                                "status": "completed", "model": model, "output": [item],
                                "usage": {"input_tokens": 1, "output_tokens": 3,
                                          "total_tokens": 4}}
                if not body.get("stream"):
                    return self._send_json(200, message if api == "messages" else response)
                delay, chunks = self._begin_stream(fake)
                parts = [f"part{i} " for i in range(chunks)]

                def event(name, data):
                    self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

                if api == "messages":
                    event("message_start", {"type": "message_start", "message": dict(
                        message, content=[], stop_reason=None,
                        usage={"input_tokens": 1, "output_tokens": 1})})
                    event("content_block_start", {"type": "content_block_start", "index": 0,
                                                  "content_block": {"type": "text", "text": ""}})
                else:
                    event("response.created", {"type": "response.created", "sequence_number": 0,
                                                "response": dict(response, status="in_progress",
                                                                 output=[])})
                for i, part in enumerate(parts):
                    if i > 0 and delay > 0:
                        time.sleep(delay)
                    if api == "messages":
                        event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                      "delta": {"type": "text_delta",
                                                                "text": part}})
                    else:
                        event("response.output_text.delta", {
                            "type": "response.output_text.delta", "sequence_number": i + 1,
                            "item_id": "msg_fake", "output_index": 0, "content_index": 0,
                            "delta": part})
                    upstream._update(record, sent=i + 1)
                if api == "messages":
                    event("content_block_stop", {"type": "content_block_stop", "index": 0})
                    event("message_delta", {"type": "message_delta",
                                            "delta": {"stop_reason": "end_turn",
                                                      "stop_sequence": None},
                                            "usage": {"output_tokens": 3}})
                    event("message_stop", {"type": "message_stop"})
                else:
                    item["content"][0]["text"] = "".join(parts)
                    event("response.completed", {"type": "response.completed",
                                                  "sequence_number": len(parts) + 1,
                                                  "response": response})
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _begin_stream(self, fake):
                """Sends an SSE answer's head; returns the request's (delay, chunks)."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                return float(fake.get("delay", 0)), int(fake.get("chunks", 3))

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
