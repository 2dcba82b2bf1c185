"""Hot reload of a real `mcpclass serve` (issue 14). Run by ctest as
`/usr/bin/python3 -m pytest tests/reload` with MCPCLASS_BIN set; standard library only.

- Under load, 20 reloads alternate valid and invalid configurations, written the way editors and
  deployment tools do (a new file renamed over the old one) and picked up by the file watcher:
  no request fails, every answer matches one of the generations, /metrics counts generations and
  refusals.
- SIGHUP reloads when watching is off.
"""
import http.client
import json
import os
import signal
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lib import procs  # noqa: E402

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(ROOT, "build", "mcpclass")

DOCUMENT = """
categories:
  - {{name: alpha, description: A, system_prompt: "You are alpha.", model: {model}}}
  - {{name: general, description: G, system_prompt: "You are general.", model: model-g}}
classifier: {{kind: rules, rules: {{alpha: {{keywords: [zebra]}}}}}}
server: {{reload: {{watch: {watch}, debounce: 0.05}}}}
"""
INVALID = ["categories: [unclosed\n", "classifier: {kind: rules, no_such_key: 1}\n"]


def write(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def serve(tmp_path, model, watch):
    cfg = tmp_path / "mcpclass.yaml"
    write(cfg, DOCUMENT.format(model=model, watch=str(watch).lower()))
    server = procs.Server([BIN, "serve", "--http", "127.0.0.1:0", "--config", str(cfg)],
                          ready=r"on http://127\.0\.0\.1:(\d+)/mcp")
    return server, cfg


def classify(conn, text):
    body = json.dumps({"name": "classify_text", "arguments": {"text": text}})
    conn.request("POST", "/mcp/tools/call", body=body,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    answer = r.read()
    assert r.status == 200, answer[:200]
    result = json.loads(answer)
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_reloads_under_load_lose_nothing(tmp_path):
    server, cfg = serve(tmp_path, "model-a", watch=True)
    stop = threading.Event()
    answers, failures = {}, []

    def load(worker):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        while not stop.is_set():
            for text, key in (("zebra crossing", "alpha"), ("plain words", "general")):
                try:
                    got = classify(conn, text)
                    pair = (key, got["class"], got["model"])
                    answers[pair] = answers.get(pair, 0) + 1
                except Exception as e:  # noqa: BLE001 - every failure is the finding
                    failures.append(f"worker {worker}: {e!r}")
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)

    threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        generation, refused, model = 1, 0, "model-a"
        for step in range(20):
            if step % 2 == 0:
                model = "model-b" if model == "model-a" else "model-a"
                write(cfg, DOCUMENT.format(model=model, watch="true"))
                generation += 1
            else:
                write(cfg, INVALID[(step // 2) % 2])
                refused += 1
            assert procs.wait_until(
                lambda: procs.metric(server.port, "mcpclass_config_generation") == generation
                and procs.metric(server.port, "mcpclass_config_reload_failures_total") == refused,
                timeout=20), f"step {step}: generation {generation}, refused {refused} not seen"
            time.sleep(0.1)  # let the load see this generation
        stop.set()
        for t in threads:
            t.join()
        assert not failures, failures[:5]
        total = sum(answers.values())
        print(f"reload under load: {total} requests over 20 reloads "
              f"({generation - 1} applied, {refused} refused), 0 failed")
        # Every answer is one generation's: alpha routes to model-a or model-b, general to model-g.
        assert set(answers) <= {("alpha", 0, "model-a"), ("alpha", 0, "model-b"),
                                ("general", 1, "model-g")}, answers
        assert answers.get(("alpha", 0, "model-a")) and answers.get(("alpha", 0, "model-b"))
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        assert classify(conn, "zebra")["model"] == model  # the last valid configuration serves
        assert server.alive()
    finally:
        stop.set()
        server.stop()


def test_sighup_reloads_when_watching_is_off(tmp_path):
    server, cfg = serve(tmp_path, "model-a", watch=False)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        write(cfg, DOCUMENT.format(model="model-b", watch="false"))
        time.sleep(0.3)  # a watcher would have reloaded by now; none runs
        assert classify(conn, "zebra")["model"] == "model-a"
        os.kill(server.pid, signal.SIGHUP)
        assert procs.wait_until(
            lambda: procs.metric(server.port, "mcpclass_config_generation") == 2, timeout=20)
        assert classify(conn, "zebra")["model"] == "model-b"
        write(cfg, INVALID[0])
        os.kill(server.pid, signal.SIGHUP)
        assert procs.wait_until(
            lambda: procs.metric(server.port, "mcpclass_config_reload_failures_total") == 1,
            timeout=20)
        assert classify(conn, "zebra")["model"] == "model-b"
        assert server.alive()
    finally:
        server.stop()
