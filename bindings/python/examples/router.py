"""An OpenAI-compatible routing proxy over the mcpclass binding, the in-process twin of
`mcpclass route` (docs/route.md); standard library only (plus PyYAML for a YAML configuration).

POST /v1/chat/completions is classified, rewritten for the chosen model (model name, reasoning
fields, optional system prompt) and forwarded to that model's upstream; the answer is copied to
the client as it arrives (chunked), so SSE streams through.

    MCPCLASS_LIBRARY=build/capi/libmcpclass.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bindings/python/examples/router.py --config router.yaml --http 127.0.0.1:8080

The configuration is the file `mcpclass route` reads. Without PyYAML (Debian: python3-yaml) it
must be JSON.
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
FAMILIES = ("openai", "vllm", "deepseek", "none")
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
    """One entry of route.models, defaults filled in."""

    def __init__(self, name, cfg):
        if not isinstance(cfg, dict) or not cfg.get("base_url"):
            raise ConfigError(f"route.models.{name}.base_url: required")
        self.name = name
        self.base_url = _expand(cfg["base_url"])
        self.api_key = _expand(cfg.get("api_key"))
        self.upstream_model = cfg.get("upstream_model") or name
        self.reasoning = cfg.get("reasoning") or "none"
        if self.reasoning not in FAMILIES:
            raise ConfigError(f"route.models.{name}.reasoning: {self.reasoning!r} is not one of "
                              f"{', '.join(FAMILIES)}")
        self.effort = cfg.get("reasoning_effort") or "high"
        self.effort_off = cfg.get("reasoning_effort_off") or "low"
        self.connect_timeout = float(cfg.get("connect_timeout", 5))
        self.timeout = float(cfg.get("timeout", 600))
        self.fallback = cfg.get("fallback") or ""
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
        self.text_mode = route.get("text", "last_user")
        self.routed = route.get("routed_models", ["auto"])
        self.system_prompt = route.get("system_prompt", "none")
        if self.text_mode not in ("last_user", "all_user"):
            raise ConfigError(f"route.text: {self.text_mode!r} is not last_user or all_user")
        if self.system_prompt not in ("none", "insert", "replace"):
            raise ConfigError(f"route.system_prompt: {self.system_prompt!r}")
        self.models = {n: Model(n, c) for n, c in (route.get("models") or {}).items()}
        for m in self.models.values():
            if m.fallback and m.fallback not in self.models:
                raise ConfigError(f"route.models.{m.name}.fallback: {m.fallback!r} is unknown")
        self.max_body = ((doc.get("server") or {}).get("http") or {}).get(
            "max_body_bytes", DEFAULT_MAX_BODY)
        # The file first (its relative paths resolve against its directory); a library that
        # does not know the route section rejects it, then the rest of the document is loaded.
        try:
            self.classifier = mcpclass.Classifier.from_file(path)
        except mcpclass.ConfigError:
            if "route" not in doc:
                raise
            rest = {k: v for k, v in doc.items() if k != "route"}
            self.classifier = mcpclass.Classifier(json.dumps(rest))
        self.categories = self.classifier.categories()
        for c in self.categories:
            if c.model and c.model not in self.models:
                raise ConfigError(f"category {c.name}: model {c.model!r} has no route.models entry")

    # --- the decision -------------------------------------------------------------------------

    def text(self, messages):
        texts = [_content_text(m.get("content")) for m in messages
                 if isinstance(m, dict) and m.get("role") == "user"]
        if not texts:
            return ""
        return "\n".join(texts) if self.text_mode == "all_user" else texts[-1]

    def with_system_prompt(self, messages, class_index):
        prompt = self.categories[class_index].system_prompt
        if self.system_prompt == "none" or not prompt:
            return messages
        for i, m in enumerate(messages):
            if isinstance(m, dict) and m.get("role") == "system":
                if self.system_prompt == "insert":
                    return messages
                out = list(messages)
                out[i] = dict(m, content=prompt)
                return out
        return [{"role": "system", "content": prompt}] + list(messages)

    def rewrite(self, request, messages, key, reasoning):
        """The body for model `key`: its upstream name and its family's reasoning fields."""
        m = self.models[key]
        out = dict(request, model=m.upstream_model, messages=messages)
        if m.reasoning == "openai":
            out["reasoning_effort"] = m.effort if reasoning else m.effort_off
        elif m.reasoning in ("vllm", "deepseek"):
            kwargs = out.get("chat_template_kwargs")
            kwargs = dict(kwargs) if isinstance(kwargs, dict) else {}
            kwargs["enable_thinking" if m.reasoning == "vllm" else "thinking"] = reasoning
            out["chat_template_kwargs"] = kwargs
        return json.dumps(out).encode()

    def chain(self, key):
        seen = []
        while key and key not in seen:
            seen.append(key)
            key = self.models[key].fallback
        return seen


def _content_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict)
                         and p.get("type") == "text" and isinstance(p.get("text"), str))
    return ""


def route(classifier, request):
    """The decision alone, in place, for a caller without upstreams (the example's former API,
    which bindings/python/tests/test_mcpclass.py still uses): the last user message is
    classified, `model` becomes the classifier's model and the category's prompt replaces the
    first system message (or is inserted). Returns the mcpclass.Result."""
    texts = [_content_text(m.get("content")) for m in request["messages"]
             if isinstance(m, dict) and m.get("role") == "user"]
    result = classifier.classify(texts[-1] if texts else "")
    request["model"] = result.model
    prompt = classifier.categories()[result.class_index].system_prompt
    messages = request["messages"]
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        messages[0] = dict(messages[0], content=prompt)
    elif prompt:
        messages.insert(0, {"role": "system", "content": prompt})
    return result


class HttpError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code = status, code


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
                chain, bodies, headers = self._decide()
                self._forward(chain, bodies, headers)
            except HttpError as e:
                self._error(e)

        def _decide(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raise HttpError(400, "invalid_request", "chunked request bodies are not supported")
            length = int(self.headers.get("Content-Length") or 0)
            if length > router.max_body:
                self.close_connection = True  # the unread body is not drained
                raise HttpError(413, "request_too_large", "the body is larger than max_body_bytes")
            raw = self.rfile.read(length)
            try:
                request = json.loads(raw)
            except ValueError:
                request = None
            if not isinstance(request, dict):
                raise HttpError(400, "invalid_request", "the body must be a JSON object")
            messages = request.get("messages")
            if not isinstance(messages, list):
                raise HttpError(400, "invalid_request", "messages must be an array")
            model = request.get("model")
            if isinstance(model, str) and model in router.routed:
                try:
                    r = router.classifier.classify(router.text(messages))
                except mcpclass.Error as e:
                    raise HttpError(500, "classification_failed", e.message) from None
                if r.model not in router.models:
                    raise HttpError(500, "classification_failed",
                                    f"the chosen model {r.model!r} has no route.models entry")
                msgs = router.with_system_prompt(messages, r.class_index)
                headers = {"x-mcpclass-category": r.category,
                           "x-mcpclass-reasoning": "true" if r.use_reasoning else "false",
                           "x-mcpclass-confidence": f"{r.confidence:.6f}"}
                return (router.chain(r.model),
                        lambda key: router.rewrite(request, msgs, key, r.use_reasoning), headers)
            if isinstance(model, str) and model in router.models:
                return [model], lambda key: raw, {}  # passthrough: the client's bytes
            raise HttpError(404, "model_not_found", f"the model {model!r} does not exist")

        def _forward(self, chain, bodies, extra):
            conn = None
            for key in chain:  # the first model that can be reached; later ones are fallbacks
                m = router.models[key]
                try:
                    conn = m.connect()
                    break
                except OSError as e:
                    error = e
            if conn is None:
                raise HttpError(502, "upstream_unavailable", f"{chain[-1]}: {error}")
            try:
                body = bodies(key)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                headers["Content-Length"] = str(len(body))
                headers.setdefault("Content-Type", "application/json")
                if m.api_key:
                    headers["Authorization"] = f"Bearer {m.api_key}"
                try:
                    conn.request("POST", m.url.path, body=body, headers=headers)
                    resp = conn.getresponse()
                except socket.timeout as e:
                    raise HttpError(504, "upstream_timeout", f"{key}: {e}") from None
                except (OSError, http.client.HTTPException) as e:
                    raise HttpError(502, "upstream_unavailable", f"{key}: {e}") from None
                self._relay(resp, dict(extra, **{"x-mcpclass-model": key}))
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
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, e):
            kind = "server_error" if e.status >= 500 else "invalid_request_error"
            self._json(e.status, {"error": {"message": str(e), "type": kind, "param": None,
                                            "code": e.code}})

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
    except (ConfigError, mcpclass.Error) as e:
        sys.exit(f"router: {e}")
    server = serve(router, host or "127.0.0.1", int(port))
    print(f"routing on http://{host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
