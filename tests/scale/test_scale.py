"""Scale-out behind a real nginx (issue 14): three `mcpclass serve` processes (rules classifier)
on 127.0.0.1 and nginx in front, configured by the very files of deploy/nginx/ (their mcp-a/b/c
addresses and listen port replaced by local ones). Run by ctest as
`/usr/bin/python3 -m pytest tests/scale` with MCPCLASS_BIN set; standard library only.

- stateless, an instance SIGKILLed under load and restarted: nginx retries the requests it could
  not get answered (refused or reset connections, 503; `proxy_next_upstream ... non_idempotent`,
  classify_text being read-only), so no client request fails;
- stateless, a rolling restart (SIGTERM, drain, exit, restart, ready; one instance at a time)
  under load: no client request fails;
- stateful, sessions pinned by their ID's prefix (server.http.session_id_prefix): every request
  of a session reaches its instance; once that instance is killed the session's next request gets
  404, and the project's own client (a router whose remote classifier goes through nginx)
  re-initializes by itself and classifies on;
- throughput through nginx with one and with three instances, printed and never asserted: this
  machine has two cores shared by nginx, wrk and every instance, so three instances cannot be
  three times faster here.
"""
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs, wrk  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DEPLOY = os.path.join(ROOT, "deploy", "nginx")
PUBLIC_HOST = "mcp.example.com"  # the templates' server_name; instances allow it
NAMES = ("mcp-a", "mcp-b", "mcp-c")

def base_document():
    document = json.loads(subprocess.run([BIN, "config"], check=True, capture_output=True,
                                         text=True).stdout)
    document["classifier"]["kind"] = "rules"
    return document


class Backend:
    """One `mcpclass serve` on a fixed port, so nginx's upstream address survives restarts."""

    def __init__(self, tmp_path, name, stateless, prefix=False):
        self.name = name
        self.port = procs.free_port()
        document = base_document()
        http = document.setdefault("server", {}).setdefault("http", {})
        http.update({"host": "127.0.0.1", "port": self.port, "drain_grace": 0.5,
                     "shutdown_timeout": 5, "auth": {"allowed_hosts": [PUBLIC_HOST]}})
        if prefix:
            http["session_id_prefix"] = name + "."
        self.config = tmp_path / f"{name}.json"
        self.config.write_text(json.dumps(document))
        self.argv = [BIN, "serve", "--http", f"127.0.0.1:{self.port}", "--config",
                     str(self.config)] + (["--stateless"] if stateless else [])
        self.server = None
        self.start()

    def start(self):
        self.server = procs.Server(self.argv, ready=r"on http://127\.0\.0\.1:(\d+)/mcp",
                                   port=self.port)
        assert procs.wait_until(self.ready, 10), f"{self.name} never ready"

    def ready(self):
        try:
            return procs.http_request(self.port, "GET", "/health/ready", timeout=2)[0] == 200
        except OSError:
            return False

    def kill(self):
        self.server.proc.kill()
        self.server.proc.wait()

    def terminate(self):
        """SIGTERM and wait for the exit; returns the exit code."""
        self.server.proc.send_signal(signal.SIGTERM)
        return self.server.proc.wait(30)

    def routed_requests(self):
        """Requests this process answered on the router dialect (POST /mcp/tools/call)."""
        _, _, body = procs.http_request(self.port, "GET", "/metrics")
        return sum(int(n) for n in re.findall(
            r'^mcpclass_http_requests_total\{route="router",code="\d+"\} (\d+)', body, re.M))

    def stop(self):
        if self.server:
            self.server.stop()


class Nginx:
    """nginx (unprivileged paths, no daemon) running a deploy/nginx/ file: `upstreams` maps each
    template address (mcp-a ...) to a backend port."""

    def __init__(self, tmp_path, template, upstreams, tag):
        self.dir = tmp_path / f"nginx-{tag}"
        self.dir.mkdir()
        text = open(os.path.join(DEPLOY, template)).read()
        for name, port in upstreams.items():
            assert f"{name}:8090" in text, (template, name)
            text = text.replace(f"{name}:8090", f"127.0.0.1:{port}")
        self.port = procs.free_port()
        assert "listen 8080;" in text
        text = text.replace("listen 8080;", f"listen 127.0.0.1:{self.port};")
        (self.dir / "mcpclass.conf").write_text(text)
        d = self.dir
        (d / "nginx.conf").write_text(f"""
worker_processes 1;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format scale '$status|$upstream_addr|$upstream_status|$http_mcp_session_id|'
                     '$request_method $request_uri';
    access_log {d}/access.log scale;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    include {d}/mcpclass.conf;
}}
""")
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(d), "-c", str(d / "nginx.conf"), "-e", str(d / "error.log"),
             "-g", f"daemon off; pid {d}/nginx.pid;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

        def up():
            try:
                return procs.http_request(self.port, "GET", "/nginx-health", timeout=2)[0] == 200
            except OSError:
                return self.proc.poll() is not None  # exited: fail below with its stderr
        procs.wait_until(up, 10)
        if self.proc.poll() is not None:
            raise RuntimeError(f"nginx did not start: {self.proc.stderr.read().decode()}")

    def log_lines(self):
        """The access log as (status, upstream_addr, upstream_status, session id, request)."""
        path = self.dir / "access.log"
        if not path.exists():
            return []
        return [tuple(line.split("|", 4)) for line in path.read_text().splitlines()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: finish requests, then exit
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Load:
    """Client threads, each on one keep-alive connection to nginx, sending router-dialect
    classify_text requests back to back and recording every outcome."""

    def __init__(self, port, threads=4):
        self.port = port
        self.results = []  # (monotonic time, ok, status, detail)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(threads)]
        for t in self.threads:
            t.start()

    def run(self, i):
        conn, n = None, 0
        while not self.stopping.is_set():
            n += 1
            body = json.dumps({"name": "classify_text",
                               "arguments": {"text": f"what is {i} + {n} in algebra"}})
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("POST", "/mcp/tools/call", body=body, headers={
                    "Content-Type": "application/json", "Host": PUBLIC_HOST})
                r = conn.getresponse()
                data = r.read()
                ok = r.status == 200 and b'"isError":false' in data and b'"class":0' in data
                self.record(ok, r.status, data[:200])
                if r.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as e:
                self.record(False, 0, repr(e))
                if conn is not None:
                    conn.close()
                conn = None

    def record(self, ok, status, detail):
        with self.lock:
            self.results.append((time.monotonic(), ok, status, detail))

    def count(self, since=0.0):
        with self.lock:
            return sum(1 for r in self.results if r[0] >= since)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(60)
        return [r for r in self.results if not r[1]]


def retried(lines):
    """Requests nginx sent to more than one instance (upstream_addr lists each attempt)."""
    return [line for line in lines if "," in line[1]]


@contextlib.contextmanager
def fleet(tmp_path, stateless):
    """Three instances behind nginx running the deploy/nginx/ file of the mode; yields
    (backends, proxy). Stateful instances prefix their session IDs with their name, the key of
    the template's consistent hash."""
    mode = "stateless" if stateless else "stateful"
    backends, proxy = [], None
    try:
        backends = [Backend(tmp_path, name, stateless=stateless, prefix=not stateless)
                    for name in NAMES]
        proxy = Nginx(tmp_path, f"mcpclass-{mode}.conf", {b.name: b.port for b in backends},
                      mode)
        yield backends, proxy
    finally:
        if proxy:
            proxy.stop()
        for b in backends:
            b.stop()


@pytest.fixture
def stateless_fleet(tmp_path):
    with fleet(tmp_path, stateless=True) as f:
        yield f


def test_stateless_instance_killed_under_load_loses_no_request(stateless_fleet):
    backends, proxy = stateless_fleet
    victim = backends[1]
    load = Load(proxy.port)
    try:
        time.sleep(1.5)
        killed_at = time.monotonic()
        victim.kill()
        time.sleep(1.5)
        victim.start()
        restarted_at = time.monotonic()
        # nginx tries the instance again after fail_timeout (2 s) and finds it serving.
        time.sleep(3.0)
    finally:
        failures = load.stop()
    lines = proxy.log_lines()
    print(f"\nkill -9 under load: {len(load.results)} requests sent, {len(failures)} failed, "
          f"{len(retried(lines))} retried by nginx on another instance, "
          f"{load.count(killed_at) - load.count(restarted_at)} answered while it was down")
    assert failures == [], failures[:5]
    assert load.count(killed_at) > load.count(restarted_at) > 0
    # The kill was felt: nginx had to send some requests again, to a live instance...
    assert retried(lines), "no request ever reached the killed instance"
    assert all(line[0] == "200" for line in lines if "tools/call" in line[4])
    # ...and the restarted instance is back in rotation.
    assert victim.routed_requests() > 0


def test_stateless_rolling_restart_under_load_fails_no_request(stateless_fleet):
    backends, proxy = stateless_fleet
    load = Load(proxy.port)
    codes = []
    try:
        time.sleep(1.0)
        for backend in backends:
            codes.append(backend.terminate())  # readiness 503, drain_grace, drain, exit
            backend.start()                    # the same port; waits for /health/ready
            # nginx marked the instance failed when it refused connections and tries it again
            # only after fail_timeout (2 s): restarting the next one before then would leave
            # nginx one instance short, or with none ("no live upstreams", 502). So the next
            # instance goes down only once this one serves nginx's traffic again.
            assert procs.wait_until(lambda: backend.routed_requests() > 0, 10, 0.1), \
                f"nginx never sent {backend.name} traffic again"
        time.sleep(1.0)
    finally:
        failures = load.stop()
    lines = proxy.log_lines()
    print(f"\nrolling restart of 3 instances under load: {len(load.results)} requests sent, "
          f"{len(failures)} failed, {len(retried(lines))} retried by nginx on another instance")
    assert codes == [0, 0, 0], codes
    assert failures == [], failures[:5]
    assert len(load.results) > 100


def throughput(tmp_path, backends, tag):
    proxy = Nginx(tmp_path, "mcpclass-stateless.conf",
                  {name: b.port for name, b in zip(NAMES, backends * 3)}, tag)
    try:
        script = wrk.lua_script({"Host": PUBLIC_HOST},
                                json.dumps({"name": "classify_text",
                                            "arguments": {"text": "what is 2 + 2 in algebra"}}),
                                expect='"isError":false')
        return wrk.run(f"http://127.0.0.1:{proxy.port}/mcp/tools/call", script,
                       connections=16, seconds=3)
    finally:
        proxy.stop()


def test_throughput_through_nginx_one_and_three_instances(stateless_fleet, tmp_path):
    backends, _ = stateless_fleet
    one = throughput(tmp_path, backends[:1], "one")
    three = throughput(tmp_path, backends, "three")
    for label, r in (("1 instance ", one), ("3 instances", three)):
        print(f"\nthroughput via nginx, {label}: {r['rps']:.0f} req/s, p50 {r['p50_ms']:.2f} ms, "
              f"p99 {r['p99_ms']:.2f} ms ({r['requests']} requests, 16 connections, "
              f"{os.cpu_count()} cores shared by wrk, nginx and the instances)")
    # Correctness only; the figures are printed, never asserted.
    for r in (one, three):
        assert r["requests"] > 0
        assert r["non_2xx"] == 0 and r["bad_answers"] == 0 and r["socket_errors"] == 0, r


# --- stateful ---------------------------------------------------------------------------------

@pytest.fixture
def stateful_fleet(tmp_path):
    with fleet(tmp_path, stateless=False) as f:
        yield f


def session_call(port, sid, text="what is 3 + 4 in algebra"):
    return procs.http_request(port, "POST", "/mcp", procs.tools_call(1, text), {
        "Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sid,
        "MCP-Protocol-Version": procs.PROTOCOL_VERSION})


def test_stateful_sessions_stay_on_their_instance_and_404_once_it_is_gone(stateful_fleet):
    backends, proxy = stateful_fleet
    by_name = {b.name: b for b in backends}
    # initialize has no session ID: round robin over all instances, each minting its own prefix.
    sids = [procs.open_session(proxy.port) for _ in range(6)]
    holders = [sid.split(".", 1)[0] for sid in sids]
    assert sorted(holders) == sorted(NAMES * 2), holders
    # Every later request of a session reaches the instance that holds it.
    for sid in sids:
        for _ in range(3):
            status, headers, body = session_call(proxy.port, sid)
            assert status == 200, (sid, status, body[:200])
            assert procs.mcp_answer(headers, body)["result"]["structuredContent"]["class"] == 0
    victim = by_name[holders[0]]
    victim.kill()
    status, _, body = session_call(proxy.port, sids[0])
    print(f"\nstateful: the session's instance killed -> {status} {body.strip()}")
    assert status == 404 and "Session not found" in body, (status, body)
    # The other instances' sessions are untouched.
    for sid, holder in zip(sids, holders):
        if holder != victim.name:
            assert session_call(proxy.port, sid)[0] == 200
    # Restarted, the instance has forgotten the session too; a new one works.
    victim.start()
    assert session_call(proxy.port, sids[0])[0] == 404
    sid = procs.open_session(proxy.port)
    assert session_call(proxy.port, sid)[0] == 200


def test_stateful_project_client_reinitializes_after_404(stateful_fleet, tmp_path):
    backends, proxy = stateful_fleet
    by_name = {b.name: b for b in backends}
    document = base_document()
    document["classifier"] = {"kind": "remote", "remote": {
        "url": f"http://127.0.0.1:{proxy.port}/mcp", "timeout": 5, "max_retries": 2}}
    config = tmp_path / "router.json"
    config.write_text(json.dumps(document))
    router = procs.Server([BIN, "serve", "--http", "127.0.0.1:0", "--stateless", "--config",
                           str(config)], ready=r"on http://127\.0\.0\.1:(\d+)/mcp")
    try:
        def classify():
            status, _, body = procs.http_request(
                router.port, "POST", "/mcp/tools/call",
                {"name": "classify_text", "arguments": {"text": "what is 5 + 6 in algebra"}})
            return status, body

        status, body = classify()
        assert status == 200 and '"isError":false' in body, body
        held = {line[3] for line in proxy.log_lines() if line[3] not in ("", "-")}
        assert len(held) == 1, held  # the remote classifier's one session
        old = held.pop()
        victim = by_name[old.split(".", 1)[0]]
        victim.kill()
        seen = len(proxy.log_lines())
        status, body = classify()
        after = proxy.log_lines()[seen:]
        print(f"\nstateful, the project's client: its session's instance killed -> nginx log: "
              + "; ".join(f"{l[0]} {l[4]} sid={l[3]}" for l in after))
        assert status == 200 and '"isError":false' in body, body
        # The old session's request was answered 404, then the client initialized anew (no
        # session ID) and went on with a session of a live instance.
        assert any(l[3] == old and l[0] == "404" for l in after), after
        assert any(l[3] in ("", "-") and l[0] == "200" for l in after), after
        new = {l[3] for l in after if l[3] not in ("", "-", old)}
        assert new and all(not s.startswith(victim.name + ".") for s in new), new
    finally:
        router.stop()
