#!/usr/bin/env python3
"""An OAuth-protected classification server in the router's REST dialect (POST /mcp/<method>),
for the OAuth client tests. It is its own authorization server: RFC 9728 protected resource
metadata, RFC 8414 metadata, the client_credentials and authorization_code (PKCE S256, approved at once: /authorize
redirects straight back) grants and refresh tokens, clients authenticated with client_secret_basic.

Prints its port on the first line of stdout, then serves until killed.
  GET  /stats         {"issued": access tokens issued, "refreshed": of them by refresh token,
                       "rejected": 401s sent}
  POST /admin/revoke  forgets every access token (the next call gets 401, as after an expiry)
Env: OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET (defaults router / router-secret), OAUTH_EXPIRES_IN
(the expires_in the tokens are given, default 3600; the server itself never expires them).
Only the standard library is used.
"""
import base64
import hashlib
import json
import os
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLIENT_ID = os.environ.get("OAUTH_CLIENT_ID", "router")
CLIENT_SECRET = os.environ.get("OAUTH_CLIENT_SECRET", "router-secret")
EXPIRES_IN = json.loads(os.environ.get("OAUTH_EXPIRES_IN", "3600"))  # a number: 3600, 1e300
lock = threading.Lock()
tokens = set()
refresh_tokens = set()
codes = {}  # code -> (code_challenge, redirect_uri)
stats = {"issued": 0, "refreshed": 0, "rejected": 0}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def reply(self, status, body=None, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        base = self.base()
        if self.path == "/.well-known/oauth-protected-resource/mcp":
            self.reply(200, {"resource": base + "/mcp", "authorization_servers": [base],
                             "scopes_supported": ["classify"]})
        elif self.path == "/.well-known/oauth-authorization-server":
            self.reply(200, {"issuer": base, "token_endpoint": base + "/token",
                             "authorization_endpoint": base + "/authorize",
                             "grant_types_supported": ["client_credentials", "authorization_code",
                                                       "refresh_token"],
                             "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                             "code_challenge_methods_supported": ["S256"]})
        elif self.path.startswith("/authorize?"):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            field = lambda k: query.get(k, [""])[0]
            if field("code_challenge_method") != "S256" or field("client_id") != CLIENT_ID:
                return self.reply(400, {"error": "invalid_request"})
            code = secrets.token_urlsafe(8)
            with lock:
                codes[code] = (field("code_challenge"), field("redirect_uri"))
            target = "%s?code=%s&state=%s" % (field("redirect_uri"), code,
                                              urllib.parse.quote(field("state")))
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/stats":
            with lock:
                self.reply(200, dict(stats))
        else:
            self.reply(404, {"error": "not_found"})

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()

    def do_POST(self):
        raw = self.body()
        if self.path == "/token":
            return self.token(urllib.parse.parse_qs(raw))
        if self.path == "/admin/revoke":
            with lock:
                tokens.clear()
            return self.reply(204)
        if not self.path.startswith("/mcp/"):
            return self.reply(404, {"error": "not_found"})
        auth = self.headers.get("Authorization", "")
        with lock:
            ok = auth.startswith("Bearer ") and auth[7:] in tokens
            if not ok:
                stats["rejected"] += 1
        if not ok:
            challenge = 'Bearer error="invalid_token", scope="classify", resource_metadata="%s"' % (
                self.base() + "/.well-known/oauth-protected-resource/mcp")
            return self.reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
        self.mcp(self.path[len("/mcp/"):], json.loads(raw or "{}"))

    def token(self, form):
        field = lambda k: form.get(k, [""])[0]
        auth = self.headers.get("Authorization", "")
        try:
            cid, secret = base64.b64decode(auth[6:]).decode().split(":", 1)
        except Exception:
            cid, secret = "", ""
        if not auth.startswith("Basic ") or cid != CLIENT_ID or secret != CLIENT_SECRET:
            return self.reply(401, {"error": "invalid_client",
                                    "error_description": "unknown client or wrong secret"})
        if field("resource") != self.base() + "/mcp":
            return self.reply(400, {"error": "invalid_target", "error_description": field("resource")})
        grant = field("grant_type")
        answer = {}
        with lock:
            if grant == "authorization_code":
                challenge, redirect = codes.pop(field("code"), (None, None))
                digest = hashlib.sha256(field("code_verifier").encode()).digest()
                computed = base64.urlsafe_b64encode(digest).decode().rstrip("=")
                if challenge is None or computed != challenge or redirect != field("redirect_uri"):
                    return self.reply(400, {"error": "invalid_grant",
                                            "error_description": "code, verifier or redirect_uri"})
                answer["refresh_token"] = secrets.token_urlsafe(16)
                refresh_tokens.add(answer["refresh_token"])
            elif grant == "refresh_token":
                if field("refresh_token") not in refresh_tokens:
                    return self.reply(400, {"error": "invalid_grant"})
                stats["refreshed"] += 1
            elif grant != "client_credentials":
                return self.reply(400, {"error": "unsupported_grant_type"})
            token = secrets.token_urlsafe(16)
            tokens.add(token)
            stats["issued"] += 1
        answer.update({"access_token": token, "token_type": "Bearer", "expires_in": EXPIRES_IN,
                       "scope": field("scope")})
        self.reply(200, answer)

    def mcp(self, method, params):
        if method == "initialize":
            return self.reply(200, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "oauth-classifier", "version": "1.0"}})
        if method == "tools/list":
            return self.reply(200, {"tools": [
                {"name": "list_categories", "description": "List categories", "inputSchema": {"type": "object"}},
                {"name": "classify_text", "description": "Classifies text", "inputSchema": {"type": "object"}}]})
        if method == "tools/call":
            if params.get("name") == "list_categories":
                payload = {"categories": ["math", "science", "other"]}
            else:
                payload = {"class": 0, "confidence": 0.9, "model": "oauth-model", "use_reasoning": False,
                           "probabilities": [0.9, 0.05, 0.05]}
            return self.reply(200, {"content": [{"type": "text", "text": json.dumps(payload)}], "isError": False})
        if method == "ping":
            return self.reply(200, {})
        self.reply(404, {"error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
sys.stdout.write("%d\n" % server.server_address[1])
sys.stdout.flush()
server.serve_forever()
