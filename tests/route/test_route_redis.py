"""`mcpclass route` against a Redis as a fleet really runs it (issue 47, items 6 and 7;
docs/route.md "Semantic cache"): a Redis that refuses every command (`requirepass` without a
password configured: NOAUTH; the stream key of another type: WRONGTYPE) costs a few commands a
second, not a busy core; a password and an ACL user given as `${NAME}` references, and a database
other than 0, share the cache between two instances, and a wrong password is logged and counted;
Redis round trips never hold the HTTP I/O threads; a Redis reached over TLS (its certificate
verified, a client certificate and a password presented) shares the cache the same way, and one
whose certificate is not trusted is counted and logged while requests are still answered. Each
test runs a redis-server of its own on a Unix socket in tmp_path (and a TLS port on 127.0.0.1);
no encoder is needed (exact hits, through Redis)."""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from test_route import BIN, models_yaml  # noqa: E402
from test_route import upstream  # noqa: E402,F401
from test_route_cache import ask, calls, metric, routing  # noqa: E402
from test_route_decisions import RouteWith, categories_without_routing  # noqa: E402
from test_cli import make_pki  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")

ERRORS = 'mcpclass_route_cache_errors_total{part="redis"}'


class Redis:
    """A redis-server of the test's own on a Unix socket, without persistence; `args` are more
    of its command-line options (--requirepass, --user, --databases)."""

    def __init__(self, tmp_path, *args):
        self.socket = str(tmp_path / "redis.sock")
        self.proc = subprocess.Popen(
            [shutil.which("redis-server"), "--port", "0", "--unixsocket", self.socket,
             "--save", "", "--appendonly", "no", "--dir", str(tmp_path), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            assert time.monotonic() < deadline and self.proc.poll() is None, "redis did not start"
            time.sleep(0.05)
        time.sleep(0.2)
        assert self.proc.poll() is None, "redis refused its options"

    def commands(self, *commands):
        """Each command in RESP on one connection (so AUTH and SELECT hold for the next); the
        first line of each reply."""
        out = b""
        for args in commands:
            out += b"*%d\r\n" % len(args)
            for a in args:
                a = str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket)
            s.sendall(out)
            f = s.makefile("rb")
            replies = []
            for _ in commands:
                line = f.readline().rstrip(b"\r\n").decode()
                if line.startswith("$") and int(line[1:]) >= 0:
                    line = f.readline().rstrip(b"\r\n").decode()
                elif line.startswith("*"):
                    n = int(line[1:])
                    items = [f.readline().rstrip(b"\r\n").decode() for _ in range(2 * n)]
                    line = items[1::2]
                replies.append(line)
            return replies

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client_certificate(directory):
    """A client certificate signed by make_pki's CA in `directory` (for tls-auth-clients)."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True,
                       timeout=60)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=mcpclass-route")
    (directory / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", "client.pem", "-extfile", "client.ext")
    return str(directory / "client.pem"), str(directory / "client.key")


class TlsRedis(Redis):
    """A Redis whose only TCP port is a TLS one on 127.0.0.1 (`address`; --port 0), with
    make_pki's server certificate, a password, and client certificates required
    (tls-auth-clients); the Unix socket stays plain, for the test's own commands."""

    def __init__(self, tmp_path, *args):
        self.pki = make_pki(tmp_path)
        self.client = client_certificate(tmp_path)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        super().__init__(tmp_path, "--tls-port", str(self.port), "--bind", "127.0.0.1",
                         "--tls-cert-file", self.pki["server.pem"],
                         "--tls-key-file", self.pki["server.key"],
                         "--tls-ca-cert-file", self.pki["ca.pem"], "--tls-auth-clients", "yes",
                         "--requirepass", "tls-secret", *args)

    def settings(self, **tls):
        cert, key = self.client
        return {"address": self.address, "password": "${REDIS_PASSWORD}",
                "env": {"REDIS_PASSWORD": "tls-secret"},
                "tls": {"ca_file": self.pki["ca.pem"], "cert_file": cert, "key_file": key,
                        **tls}}


def start(tmp_path, upstream, redis, name, **settings):  # noqa: F811
    """An instance (in tmp_path/name) sharing `redis` with `settings` in its `redis` section;
    `env` its environment's additions."""
    env = settings.pop("env", {})
    fields = ", ".join(f"{k}: {json.dumps(v)}" for k, v in
                       {"address": redis.socket, "timeout": 0.2, **settings}.items())
    cache = f"{{backend_type: redis, redis: {{{fields}}}}}"
    route = models_yaml(upstream.url).replace(
        "  models:\n", f"  semantic_cache: {cache}\n  models:\n", 1)
    (tmp_path / name).mkdir()
    return RouteWith(tmp_path / name, categories_without_routing() + routing(False) + route,
                     env=env)


def health_during_burst(route, send, count, settle):
    """Calls send(i) for i < count, each on a thread of its own; `settle` seconds in, times an
    unrelated GET /health; joins the threads. Returns its status and seconds."""
    threads = [threading.Thread(target=send, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    time.sleep(settle)
    t0 = time.monotonic()
    status, _ = route.get("/health")
    health = time.monotonic() - t0
    for t in threads:
        t.join(timeout=60)
    return status, health


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stopped_log(route):
    assert route.stop() == 0
    return "".join(route.log) + route.proc.stderr.read()


@pytest.mark.parametrize("case", ["noauth", "wrongtype"])
def test_a_redis_refusing_every_command_is_backed_off(tmp_path, upstream, case):  # noqa: F811
    # NOAUTH: Redis wants a password and none is configured; WRONGTYPE: the stream key holds a
    # string. Both are error replies on a working connection, which the reader used to retry at
    # once: 265,488 errors in 3 s and a busy core.
    if case == "noauth":
        redis = Redis(tmp_path, "--requirepass", "s3cret")
    else:
        redis = Redis(tmp_path)
        assert redis.commands(["SET", "mcpclass:cache:stream", "not a stream"]) == ["+OK"]
    r = None
    try:
        r = start(tmp_path, upstream, redis, "a")
        cpu0, t0 = cpu_seconds(r.proc.pid), time.monotonic()
        time.sleep(3)
        # Requests are still answered (by the upstream), each within the timeout.
        for i in range(3):
            status, h, _ = r.post(ask(f"question {i}"))
            assert status == 200 and "x-vsr-cache-hit" not in h
        errors = metric(r, ERRORS)
        elapsed = time.monotonic() - t0
        # 100 ms doubling to 5 s: about 5 reader failures in 3 s, plus the requests' own.
        assert 1 <= errors <= 50, errors
        assert (cpu_seconds(r.proc.pid) - cpu0) / elapsed < 0.3
        log = stopped_log(r)
        r = None
        assert ("NOAUTH" if case == "noauth" else "WRONGTYPE") in log, log
        assert log.count("WRONGTYPE" if case == "wrongtype" else "NOAUTH") <= 5, log
    finally:
        if r:
            r.stop()
        redis.stop()


def test_password_acl_user_and_database_share_the_cache(tmp_path, upstream):  # noqa: F811
    redis = Redis(tmp_path, "--requirepass", "default-secret", "--databases", "4",
                  "--user", "cache", "on", ">user-secret", "~mcpclass:*", "&*", "+@all")
    settings = {"username": "${REDIS_USER}", "password": "${REDIS_PASSWORD}", "database": 3,
                "env": {"REDIS_USER": "cache", "REDIS_PASSWORD": "user-secret"}}
    a = b = None
    try:
        a = start(tmp_path, upstream, redis, "a", **dict(settings))
        b = start(tmp_path, upstream, redis, "b", **dict(settings))
        question = "What is the capital of France?"
        status, h, _ = a.post(ask(question))
        assert status == 200 and "x-vsr-cache-hit" not in h
        # The entry is in database 3, written as the ACL user (in the background, after the
        # client had its answer); database 0 has none.
        auth = ["AUTH", "cache", "user-secret"]
        deadline = time.monotonic() + 10
        while not redis.commands(auth, ["SELECT", "3"], ["KEYS", "mcpclass:cache:entry:*"])[2]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert redis.commands(auth, ["KEYS", "mcpclass:cache:entry:*"])[1] == []
        # B finds it in Redis (stream or exact look-up): the upstream saw it once.
        status, h, body = b.post(ask(question))
        assert status == 200 and h.get("x-vsr-cache-hit") == "true", body
        assert calls(upstream) == 1
        assert metric(a, ERRORS) == 0 and metric(b, ERRORS) == 0
        # The secrets are not in the configuration the instance prints (only their names).
        config = (tmp_path / "a" / "router.yaml").read_text()
        assert "user-secret" not in config and "${REDIS_PASSWORD}" in config
    finally:
        for r in (a, b):
            if r:
                assert r.stop() == 0
        redis.stop()


def test_tls_with_a_password_shares_the_cache(tmp_path, upstream):  # noqa: F811
    # Issue 47: "A Redis with a password and with TLS works as the fleet's shared cache". A
    # expects Redis's certificate to name 127.0.0.1 (the host of its address), B to name
    # localhost (server_name, also sent as SNI); both present a client certificate.
    redis = TlsRedis(tmp_path)
    a = b = None
    try:
        a = start(tmp_path, upstream, redis, "a", **redis.settings())
        b = start(tmp_path, upstream, redis, "b", **redis.settings(server_name="localhost"))
        question = "What is the capital of France?"
        status, h, _ = a.post(ask(question))
        assert status == 200 and "x-vsr-cache-hit" not in h
        deadline = time.monotonic() + 10
        while not redis.commands(["AUTH", "tls-secret"], ["KEYS", "mcpclass:cache:entry:*"])[1]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        status, h, body = b.post(ask(question))
        assert status == 200 and h.get("x-vsr-cache-hit") == "true", body
        assert calls(upstream) == 1
        assert metric(a, ERRORS) == 0 and metric(b, ERRORS) == 0
    finally:
        for r in (a, b):
            if r:
                assert r.stop() == 0
        redis.stop()


@pytest.mark.parametrize("case", ["other_ca", "other_name", "no_client_certificate"])
def test_a_tls_redis_that_cannot_be_trusted_is_counted_and_logged(tmp_path, upstream,  # noqa: F811
                                                                   case):
    redis = TlsRedis(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    settings = redis.settings()
    # OpenSSL's words for each: "self-signed certificate in certificate chain" (the other CA),
    # "hostname mismatch"; Redis's refusal of a client without a certificate comes after the
    # client's side of the TLS 1.3 handshake, on the AUTH: an alert or a reset.
    expected = ["TLS certificate verification failed for 127.0.0.1: "]
    if case == "other_ca":
        settings["tls"]["ca_file"] = make_pki(other)["ca.pem"]
    elif case == "other_name":
        settings["tls"]["server_name"] = "redis.example.com"
        expected = ["TLS certificate verification failed for redis.example.com: hostname mismatch"]
    else:
        del settings["tls"]["cert_file"], settings["tls"]["key_file"]
        expected = ["handshake: read: tlsv13 alert certificate required",
                    "handshake: write: Connection reset by peer"]
    r = start(tmp_path, upstream, redis, "a", **settings)
    try:
        time.sleep(1)
        for i in range(2):
            status, h, _ = r.post(ask(f"question {i}"))
            assert status == 200 and "x-vsr-cache-hit" not in h
        assert 1 <= metric(r, ERRORS) <= 40
        log = stopped_log(r)
        r = None
        assert any(e in log for e in expected), log
        assert "tls-secret" not in log, log
        assert redis.commands(["AUTH", "tls-secret"], ["DBSIZE"])[1] == ":0"
    finally:
        if r:
            r.stop()
        redis.stop()


def test_unusable_tls_files_refuse_to_start_naming_the_key(tmp_path, upstream):  # noqa: F811
    redis = TlsRedis(tmp_path)
    try:
        for key, error in [("ca_file", "TLS: cannot read the CA file"),
                           ("cert_file", "TLS: cannot read the certificate chain file"),
                           ("key_file", "TLS: cannot read the private key file")]:
            settings = redis.settings(**{key: str(tmp_path / "missing.pem")})
            with pytest.raises(RuntimeError, match=rf"route\.semantic_cache\.redis\.tls\.{key}: "
                                                   + error):
                start(tmp_path, upstream, redis, f"bad-{key}", **settings)
        # The key of another pair: does not belong to the certificate.
        settings = redis.settings(key_file=redis.pki["server.key"])
        with pytest.raises(RuntimeError,
                           match=r"redis\.tls\.key_file: .*(does not belong|key values mismatch)"):
            start(tmp_path, upstream, redis, "bad-pair", **settings)
    finally:
        redis.stop()


def test_a_wrong_password_is_logged_counted_and_bounded(tmp_path, upstream):  # noqa: F811
    redis = Redis(tmp_path, "--requirepass", "right")
    r = start(tmp_path, upstream, redis, "a", password="${REDIS_PASSWORD}",
              env={"REDIS_PASSWORD": "not-the-password-xyz"})
    try:
        time.sleep(2)
        status, h, _ = r.post(ask("hello there"))
        assert status == 200 and "x-vsr-cache-hit" not in h
        assert 1 <= metric(r, ERRORS) <= 40
        log = stopped_log(r)
        r = None
        assert "WRONGPASS" in log and "handshake" in log, log
        assert "not-the-password-xyz" not in log, log
    finally:
        if r:
            r.stop()
        redis.stop()


def test_an_unset_secret_refuses_to_start_naming_the_key(tmp_path, upstream):  # noqa: F811
    redis = Redis(tmp_path)
    try:
        with pytest.raises(RuntimeError, match=r"route\.semantic_cache\.redis\.password: "
                                               r"environment variable MCPCLASS_TEST_UNSET"):
            start(tmp_path, upstream, redis, "a", password="${MCPCLASS_TEST_UNSET}")
    finally:
        redis.stop()


def test_redis_settings_errors_name_the_key(tmp_path):
    for text, error in [
            ("{username: u}", "route.semantic_cache.redis.username: needs a password"),
            ("{database: -1}", "route.semantic_cache.redis.database"),
            ("{connections: 0}", "route.semantic_cache.redis.connections"),
            ("{backoff_min: 2, backoff_max: 1}",
             "route.semantic_cache.redis.backoff_max: is less than backoff_min"),
            ("{max_pending_writes: 0}",
             "route.semantic_cache.redis.max_pending_writes: must be within [1, 1000000]"),
            ("{max_pending_writes: 2000000}",
             "route.semantic_cache.redis.max_pending_writes: must be within [1, 1000000]"),
            ("{read_block: 0}", "route.semantic_cache.redis.read_block: must be within [0.01, 10]"),
            ("{read_block: -1}", "route.semantic_cache.redis.read_block: must be within [0.01, 10]"),
            ("{read_block: 3600}",
             "route.semantic_cache.redis.read_block: must be within [0.01, 10]"),
            ("{tls: {cert_file: c.pem}}",
             "route.semantic_cache.redis.tls: needs both cert_file and key_file"),
            ("{address: /run/redis.sock, tls: {}}",
             "route.semantic_cache.redis.tls.server_name: is needed with a Unix socket"),
            ("{tls: {verify: false}}", "route.semantic_cache.redis.tls.verify")]:
        config = tmp_path / "c.yaml"
        config.write_text(categories_without_routing() + routing(False) + models_yaml(
            "http://127.0.0.1:1/v1").replace(
                "  models:\n",
                f"  semantic_cache: {{backend_type: redis, redis: {text}}}\n  models:\n", 1))
        p = subprocess.run([BIN, "config", "-c", str(config)], capture_output=True, text=True,
                           timeout=30)
        assert p.returncode == 2 and error in p.stderr, (text, p.stderr)


class SlowProxy:
    """A Unix socket in front of `redis` that holds each of Redis's answers `delay` seconds (a
    Redis far away): every round trip takes at least `delay`."""

    def __init__(self, tmp_path, redis, delay):
        self.socket = str(tmp_path / "slow.sock")
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(self.socket)
        self.listener.listen(64)
        self.redis, self.delay, self.closed = redis, delay, False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX)
            server.connect(self.redis.socket)
            threading.Thread(target=self._pipe, args=(client, server, 0), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, self.delay),
                             daemon=True).start()

    @staticmethod
    def _pipe(source, sink, delay):
        try:
            while data := source.recv(65536):
                time.sleep(delay)
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.closed = True
        self.listener.close()


def test_redis_round_trips_never_hold_the_io_threads(tmp_path, upstream):  # noqa: F811
    # A Redis 60 ms away: 24 concurrent cacheable misses each wait on it (the exact look-up),
    # on the workers and the pool's connections; an unrelated GET /health meanwhile is answered
    # by an I/O thread at once: a few ms here (was: 1.49 s with one connection behind a mutex,
    # and 0.7 s with the pool but the look-ups on the I/O threads). The bound is loose: timing
    # goals belong in benchmarks.
    redis = Redis(tmp_path)
    proxy = SlowProxy(tmp_path, redis, 0.06)
    fake = type("R", (), {"socket": proxy.socket})
    r = start(tmp_path, upstream, fake, "a", timeout=0.5, connections=4)
    try:
        results = []

        def miss(i):
            results.append(r.post(ask(f"Distinct question number {i}?"))[0])

        status, health = health_during_burst(r, miss, 24, 0.05)
        assert status == 200
        assert results == [200] * 24
        assert health < 0.3, health
        # More than one connection carried the look-ups at once.
        assert metric(r, "mcpclass_route_cache_redis_connections_peak") > 1
        assert metric(r, 'mcpclass_route_cache_errors_total{part="redis_busy"}') == 0
    finally:
        assert r.stop() == 0
        proxy.close()
        redis.stop()


def test_fail_open_requests_never_wait_on_redis_on_the_io_threads(tmp_path, upstream):  # noqa: F811
    # route.admission with one slot and no queue in front of a slow remote classifier: all but
    # one of a burst are refused at once, on the I/O thread that read them, and forwarded
    # unclassified (fail-open). Such a request used to look the cache up where it was refused:
    # with a Redis 100 ms away each look-up held an I/O thread, and an unrelated GET /health
    # waited behind them (about 1 s here). Fail-open requests skip the cache (docs/route.md
    # "Overload"), so /health is answered at once and Redis sees none of their keys.
    from test_route_overload import ConfigRoute, config
    redis = Redis(tmp_path)
    proxy = SlowProxy(tmp_path, redis, 0.1)
    cache = f'{{backend_type: redis, redis: {{address: "{proxy.socket}", timeout: 0.5}}}}'
    r = ConfigRoute(tmp_path, config(upstream.url, "fail_open").replace(
        "route:\n", f"route:\n  semantic_cache: {cache}\n", 1))
    try:
        results = []

        def ask_once(i):
            results.append(r.post(ask(f"integral number {i}"))[:2])

        status, health = health_during_burst(r, ask_once, 24, 0.1)
        assert status == 200
        assert [s for s, _ in results] == [200] * 24, results
        opened = [h for _, h in results if "x-mcpclass-fail-open" in h]
        assert len(opened) >= 12, results
        assert all("x-vsr-cache-hit" not in h for h in opened)
        assert health < 0.3, health
        # Only classified requests looked the cache up (the misses it counts).
        assert metric(r, "mcpclass_route_cache_misses_total") <= 24 - len(opened)
    finally:
        r.stop()
        proxy.close()
        redis.stop()


def test_max_pending_writes_sheds_the_stores_beyond_it(tmp_path, upstream):  # noqa: F811
    # redis.max_pending_writes bounds the stores waiting for the link's writers: with 1, eight
    # misses answered at once leave one store writing (each round trip 0.2 s through the slow
    # socket) and shed those that come meanwhile, each counted as redis_busy (no command waits
    # long for a connection here: 4 of them and a 2 s timeout). Redis holds only the stores
    # written.
    # (With the fixed bound of 1,024 none was shed.)
    redis = Redis(tmp_path)
    proxy = SlowProxy(tmp_path, redis, 0.2)
    fake = type("R", (), {"socket": proxy.socket})
    r = start(tmp_path, upstream, fake, "a", timeout=2, connections=4, max_pending_writes=1,
              read_block=0.05)
    try:
        threads = [threading.Thread(target=r.post, args=(ask(f"Shed question {i}?"),))
                   for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert calls(upstream) == 8
        busy = 'mcpclass_route_cache_errors_total{part="redis_busy"}'
        deadline = time.monotonic() + 10
        while True:  # until every store was written or shed
            stored = redis.commands(["KEYS", "mcpclass:cache:entry:*"])[0]
            if len(stored) + metric(r, busy) == 8:
                break
            assert time.monotonic() < deadline, (stored, metric(r, busy))
            time.sleep(0.05)
        assert metric(r, busy) >= 2 and len(stored) >= 1, (stored, metric(r, busy))
    finally:
        assert r.stop() == 0
        proxy.close()
        redis.stop()
