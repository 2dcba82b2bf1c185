"""An OpenAI-compatible routing proxy over the mcpclass binding, the in-process twin of
`mcpclass route` (docs/route.md); standard library only (plus PyYAML for a YAML configuration).

POST /v1/chat/completions is evaluated by the library (mcpclass.Router, the code `mcpclass route`
runs: signals, decision, guards, the body for the chosen model and for each of its fallbacks, the
headers) and forwarded to that model's upstream; the answer is copied to the client as it arrives
(chunked), so SSE streams through. This file owns only the HTTP side: serving, upstream
connections, fallback on connect failures, the answer's headers.

    MCPCLASS_LIBRARY=build/capi/libmcpclass.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bindings/python/examples/router.py --config router.yaml --http 127.0.0.1:8080

The configuration is the file `mcpclass route` reads (the library reads it whole; this file reads
the upstreams of route.models). Without PyYAML (Debian: python3-yaml) it must be JSON.
"""

import argparse
import http.client
import http.server
import json
import os
import re
import socket
import ssl
import sys
import urllib.parse

import mcpclass

DEFAULT_MAX_BODY = 4 << 20  # server.http.max_body_bytes' default
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Connection-level headers are not forwarded (RFC 9110 7.6.1); the length is recomputed.
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
        "upgrade", "content-length", "host", "authorization"}


class ConfigError(Exception):
    pass


def _load_document(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml
    except ImportError:
        raise ConfigError(f"{path} is not JSON and PyYAML is not installed") from None
    return yaml.safe_load(text)


def _expand(value):
    return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value or "")


class Model:
    """What the proxy needs of one entry of route.models to reach its upstream."""

    def __init__(self, name, cfg):
        if not isinstance(cfg, dict) or not cfg.get("base_url"):
            raise ConfigError(f"route.models.{name}.base_url: required")
        self.name = name
        self.base_url = _expand(cfg["base_url"])
        self.api_key = _expand(cfg.get("api_key"))
        self.upstream_model = cfg.get("upstream_model") or ""
        self.connect_timeout = float(cfg.get("connect_timeout", 5))
        self.timeout = float(cfg.get("timeout", 600))
        url = urllib.parse.urlsplit(self.base_url.rstrip("/") + "/chat/completions")
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ConfigError(f"route.models.{name}.base_url: {self.base_url!r} is not http(s)")
        self.url = url
        self.ssl = None
        if url.scheme == "https":
            self.ssl = ssl.create_default_context(cafile=cfg.get("ca_file") or None)

    def connect(self):
        """A connected connection; OSError when resolving, connecting or TLS fails."""
        cls = http.client.HTTPSConnection if self.ssl else http.client.HTTPConnection
        kwargs = {"context": self.ssl} if self.ssl else {}
        conn = cls(self.url.hostname, self.url.port, timeout=self.connect_timeout, **kwargs)
        conn.connect()
        # From here the model's timeout bounds each read (http.client has no whole-exchange
        # deadline): a stalled upstream is cut off after `timeout` seconds of silence.
        conn.sock.settimeout(self.timeout or None)
        return conn


class Router:
    def __init__(self, path):
        doc = _load_document(path)
        if not isinstance(doc, dict):
            raise ConfigError(f"{path}: not a mapping")
        route = doc.get("route") or {}
        self.routed = route.get("routed_models", ["auto"])
        self.models = {n: Model(n, c) for n, c in (route.get("models") or {}).items()}
        self.max_body = ((doc.get("server") or {}).get("http") or {}).get(
            "max_body_bytes", DEFAULT_MAX_BODY)
        self.router = mcpclass.Router.from_file(path)  # reads and checks every section

    def evaluate(self, raw):
        """The library's evaluation of a request body (bytes); HttpError when it is not a JSON
        object or a model failed."""
        try:
            return json.loads(self.router.evaluate_json(raw.decode("utf-8")))
        except (UnicodeDecodeError, mcpclass.InvalidTextError):
            raise HttpError(400, "invalid_request", "the body must be a JSON object") from None
        except mcpclass.Error as e:
            raise HttpError(500, "classification_failed", e.message) from None

    def close(self):
        self.router.close()


def replace_model(raw, model):
    """`raw` (a JSON object's bytes) with the value of its top-level "model" member replaced,
    every other byte as the client sent it (what `mcpclass route` forwards on a passthrough)."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    out, copied = [], 0
    i = ws.match(text, 0).end()
    if not text.startswith("{", i):
        return raw
    i = ws.match(text, i + 1).end()
    while text.startswith('"', i):
        key, i = decoder.raw_decode(text, i)
        i = ws.match(text, i).end()
        if not text.startswith(":", i):
            break
        start = ws.match(text, i + 1).end()
        _, end = decoder.raw_decode(text, start)
        if key == "model":
            out += [text[copied:start], json.dumps(model, ensure_ascii=False)]
            copied = end
        i = ws.match(text, end).end()
        if text.startswith(",", i):
            i = ws.match(text, i + 1).end()
    return ("".join(out) + text[copied:]).encode("utf-8")


def _body(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class HttpError(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}


def make_handler(router):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/v1/models":
                names = list(router.routed) + sorted(router.models)
                return self._json(200, {"object": "list", "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "mcpclass"}
                    for n in names]})
            if self.path == "/health":
                return self._json(200, {"status": "ok"})
            self._error(HttpError(404, "not_found", f"no such endpoint: GET {self.path}"))

        def do_POST(self):
            if self.path != "/v1/chat/completions":
                return self._error(HttpError(404, "not_found", f"no such endpoint: {self.path}"))
            try:
                self._chat()
            except HttpError as e:
                self._error(e)

        def _chat(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raise HttpError(400, "invalid_request", "chunked request bodies are not supported")
            length = int(self.headers.get("Content-Length") or 0)
            if length > router.max_body:
                self.close_connection = True  # the unread body is not drained
                raise HttpError(413, "request_too_large", "the body is larger than max_body_bytes")
            raw = self.rfile.read(length)
            ev = router.evaluate(raw)
            action = ev["action"]
            if action in ("reject", "block"):
                return self._send(ev["status"], _body(ev["error"]), ev["headers"])
            if action == "passthrough":
                # The client's bytes, to that model only, with its upstream name if it has one.
                m = router.models.get(ev["model"])
                if m and m.upstream_model and m.upstream_model != ev["model"]:
                    raw = replace_model(raw, m.upstream_model)
                return self._forward([(ev["model"], raw)], {}, {}, [])
            chain = [(ev["model"], _body(ev["body"]))]
            chain += [(f["model"], _body(f["body"])) for f in ev.get("fallbacks", [])]
            self._forward(chain, ev["headers"], ev["upstream_headers"],
                          ev["upstream_headers_removed"])

        def _forward(self, chain, extra, upstream_headers, removed):
            conn = None
            for key, body in chain:  # the first model that can be reached; then fallbacks
                m = router.models.get(key)
                if m is None:
                    raise HttpError(500, "no_upstream", f"no upstream for model {key!r}")
                try:
                    conn = m.connect()
                    break
                except OSError as e:
                    error = e
            # The answer's headers; an upstream error too says what was decided and which
            # upstream failed, as `mcpclass route`'s does.
            answer = dict(extra, **{"x-mcpclass-model": key})
            if conn is None:
                raise HttpError(502, "upstream_unavailable", f"{key}: {error}", answer)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                headers["Content-Length"] = str(len(body))
                headers.setdefault("Content-Type", "application/json")
                if m.api_key:
                    headers["Authorization"] = f"Bearer {m.api_key}"
                # The decision's header_mutation: deletes first, then adds and updates replace.
                for name in list(removed) + list(upstream_headers):
                    for k in [k for k in headers if k.lower() == name.lower()]:
                        del headers[k]
                headers.update(upstream_headers)
                try:
                    conn.request("POST", m.url.path, body=body, headers=headers)
                    resp = conn.getresponse()
                except socket.timeout as e:
                    raise HttpError(504, "upstream_timeout", f"{key}: {e}", answer) from None
                except (OSError, http.client.HTTPException) as e:
                    raise HttpError(502, "upstream_unavailable", f"{key}: {e}", answer) from None
                self._relay(resp, answer)
            finally:
                conn.close()  # also cancels the upstream when the client went away

        def _relay(self, resp, extra):
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in _HOP:
                    self.send_header(k, v)
            for k, v in extra.items():
                self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    data = resp.read1(65536)  # what has arrived, without waiting for more
                    if not data:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
            except (OSError, http.client.HTTPException):
                # Broken after the answer began: end without the final chunk, so the client
                # sees a truncated answer.
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _json(self, status, obj):
            self._send(status, json.dumps(obj).encode(), {})

        def _send(self, status, data, headers):
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, e):
            kind = "server_error" if e.status >= 500 else "invalid_request_error"
            self._send(e.status, json.dumps({"error": {
                "message": str(e), "type": kind, "param": None, "code": e.code}}).encode(),
                e.headers)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def serve(router, host="127.0.0.1", port=0):
    """A started-on-demand server (call serve_forever); port 0 picks a free one."""
    return Server((host, port), make_handler(router))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="the file `mcpclass route` reads")
    p.add_argument("--http", default="127.0.0.1:8080", help="listen address HOST:PORT")
    args = p.parse_args()
    host, _, port = args.http.rpartition(":")
    try:
        router = Router(args.config)
    except (ConfigError, OSError, ValueError, mcpclass.Error) as e:
        sys.exit(f"router: {e}")
    server = serve(router, host or "127.0.0.1", int(port))
    print(f"routing on http://{host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
