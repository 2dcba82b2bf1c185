"""A local stand-in for the Hugging Face Hub's file API, as huggingface_hub's snapshot_download
meets it, for `mcpclass model pull` (tests/cli/test_model_pull.py):

  GET /api/models/ORG/NAME/revision/REV   {"id", "sha", "siblings": [{"rfilename"}]}
  GET /ORG/NAME/resolve/REV/PATH          a small file: 200, its bytes, ETag "<git blob id>";
                                          a large (LFS) file: 302 to /storage/<sha256>,
                                          X-Linked-Etag "<sha256>", X-Linked-Size; both with
                                          X-Repo-Commit
  GET /storage/<sha256>                   the bytes, honouring Range (206)

A repository may be gated (401 with X-Error-Code GatedRepo unless the request carries its
token), a missing one answers 404 RepoNotFound, an unknown revision RevisionNotFound. Faults for
the tests: `cut_after` (the first storage answer of a file breaks after that many bytes) and
`corrupt` (storage serves other bytes than those hashed).
"""
import hashlib
import http.server
import json
import threading


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Repo:
    def __init__(self, files, lfs=(), gated_token=None, revisions=None):
        self.files = files  # path -> bytes
        self.lfs = set(lfs)
        self.gated_token = gated_token
        self.sha = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
        self.revisions = revisions or {"main": self.sha}


class Hub:
    def __init__(self, repos):
        self.repos = repos
        self.requests = []  # (method, path, headers) of every request
        self.cut_after = {}  # sha256 -> bytes sent before the first answer breaks
        self.corrupt = set()  # sha256 of files whose storage bytes are wrong
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.requests.append(("GET", self.path, dict(self.headers)))
                try:
                    hub.answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def send(h, status, body=b"", headers=()):
        h.send_response(status)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def error(self, h, status, code, message):
        self.send(h, status, json.dumps({"error": message}).encode(),
                  [("X-Error-Code", code), ("Content-Type", "application/json")])

    def repo_for(self, h, repo_id):
        repo = self.repos.get(repo_id)
        if repo is None:
            self.error(h, 404, "RepoNotFound", "Repository Not Found")
            return None
        if repo.gated_token and h.headers.get("Authorization") != f"Bearer {repo.gated_token}":
            self.error(h, 401, "GatedRepo", "Access to this model is restricted")
            return None
        return repo

    def answer(self, h):
        path = h.path.split("?")[0]
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "revision":
            repo = self.repo_for(h, "/".join(parts[2:4]))
            if repo is None:
                return
            sha = repo.revisions.get("/".join(parts[5:]))
            if sha is None:
                return self.error(h, 404, "RevisionNotFound", "Invalid rev id")
            doc = {"id": "/".join(parts[2:4]), "sha": sha,
                   "siblings": [{"rfilename": f} for f in sorted(repo.files)]}
            return self.send(h, 200, json.dumps(doc).encode(), [("Content-Type", "application/json")])
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = self.repo_for(h, "/".join(parts[:2]))
            if repo is None:
                return
            if parts[3] not in repo.revisions.values() and parts[3] not in repo.revisions:
                return self.error(h, 404, "RevisionNotFound", "Invalid rev id")
            name = "/".join(parts[4:])
            data = repo.files.get(name)
            if data is None:
                return self.error(h, 404, "EntryNotFound", "Entry not found")
            common = [("X-Repo-Commit", repo.sha)]
            if name in repo.lfs:
                sha256 = hashlib.sha256(data).hexdigest()
                self.storage = getattr(self, "storage", {})
                self.storage[sha256] = data
                return self.send(h, 302, b"", common + [
                    ("Location", f"/storage/{sha256}?signature=x"),
                    ("X-Linked-Etag", f'"{sha256}"'), ("X-Linked-Size", str(len(data))),
                    ("ETag", '"redirect"')])
            return self.send(h, 200, data, common + [("ETag", f'"{git_blob_id(data)}"')])
        if parts[0] == "storage" and len(parts) == 2:
            data = getattr(self, "storage", {}).get(parts[1])
            if data is None:
                return self.send(h, 404)
            if parts[1] in self.corrupt:
                data = bytes(b ^ 0x5A for b in data)
            start = 0
            rng = h.headers.get("Range")
            if rng and rng.startswith("bytes=") and rng.endswith("-"):
                start = int(rng[len("bytes="):-1])
            body = data[start:]
            cut = self.cut_after.pop(parts[1], None)
            h.send_response(206 if start else 200)
            h.send_header("Content-Length", str(len(body)))
            if start:
                h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            h.end_headers()
            if cut is not None:
                h.wfile.write(body[:cut])
                h.wfile.flush()
                h.close_connection = True
                h.connection.shutdown(2)
                return
            h.wfile.write(body)
            return
        self.send(h, 404)
