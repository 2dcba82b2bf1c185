"""The semantic cache of `mcpclass route` (issue 33, docs/route.md "Semantic cache"), driven as a
process in front of the fake upstream, which counts what reaches it: a repeated query and a
paraphrase are answered without the upstream (x-vsr-cache-hit), another model or system prompt
misses, errors are never stored, a streamed answer is replayed as SSE that the official `openai`
client parses, and the metrics count it all. With `backend_type: redis`, two instances and a
redis-server of the test's own (a Unix socket in tmp_path): a paraphrase answered through one is a
hit on the other, an instance started later loads the answers already stored, and killing Redis
loses no request. The encoder is the USE-lite model the learned
classifiers use by default (`models/fetch-use-lite.sh`); without it only the exact path runs."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from test_route import BIN, SOURCE, models_yaml, node_for_tests  # noqa: E402
from test_route import upstream  # noqa: E402,F401
from test_route_decisions import RouteWith, categories_without_routing  # noqa: E402

# Where models/fetch-use-lite.sh puts it (MCPCLASS_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache).
USE_LITE = os.path.join(
    os.environ.get("MCPCLASS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mcpclass"),
    "use-lite")
ENCODER = textwrap.dedent(f"""\
    embedding_model:
      encoder: "{USE_LITE}/use-lite.safetensors"
      tokenizer: "{USE_LITE}/tokenizer.model"
    """)


def routing(encoder=True):
    text = "routing:\n  default_model: m-none\n"
    if encoder:
        text += textwrap.indent(ENCODER, "  ")
    return text + textwrap.indent(textwrap.dedent("""\
        signals:
          keywords: [{name: nocache, operator: OR, keywords: [uncached]}]
        decisions:
          - name: nocache
            priority: 10
            rules: {type: keyword, name: nocache}
            modelRefs: [{model: m-vllm}]
            plugins: [{type: semantic-cache, configuration: {enabled: false}}]
        """), "  ")


def start(tmp_path, upstream, encoder=True, cache="{similarity_threshold: 0.8}"):  # noqa: F811
    route = models_yaml(upstream.url).replace(
        "  models:\n", f"  semantic_cache: {cache}\n  models:\n", 1)
    text = categories_without_routing() + routing(encoder) + route
    return RouteWith(tmp_path, text)


def ask(text, system=None, model="auto", **fields):
    messages = [{"role": "system", "content": system}] if system else []
    return {"model": model, "messages": messages + [{"role": "user", "content": text}], **fields}


def calls(upstream):  # noqa: F811
    return len(upstream.records())


def metric(router, name):
    c = router.conn()
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith(name + " ") or line.startswith(name + "{"))


@pytest.fixture(scope="module")
def use_lite():
    """USE-lite from models/fetch-use-lite.sh (instant when cached, as for the learned unit
    tests); skips only where it cannot be fetched and converted."""
    fetch = subprocess.run([os.path.join(SOURCE, "models", "fetch-use-lite.sh"), BIN],
                           capture_output=True, timeout=1800)
    if fetch.returncode != 0:
        pytest.skip("models/fetch-use-lite.sh failed: " + fetch.stderr.decode()[-300:])


needs_use_lite = pytest.mark.usefixtures("use_lite")


@needs_use_lite
def test_repeat_and_paraphrase_are_answered_from_the_cache(tmp_path, upstream):  # noqa: F811
    r = start(tmp_path, upstream)
    try:
        status, h, body = r.post(ask("How do I reverse a list in Python?"))
        assert status == 200 and "x-vsr-cache-hit" not in h
        first = json.loads(body)
        assert calls(upstream) == 1
        for text in ["How do I reverse a list in Python?",      # the same text
                     "How can I reverse a list in Python?",     # a paraphrase
                     "how do i reverse a python list"]:
            status, h, body = r.post(ask(text))
            assert status == 200, body
            assert h["x-vsr-cache-hit"] == "true", text
            answer = json.loads(body)
            assert answer["object"] == "chat.completion"
            assert answer["choices"][0]["message"] == first["choices"][0]["message"]
            assert answer["choices"][0]["finish_reason"] == "stop"
        assert calls(upstream) == 1  # none of them reached the upstream
        assert float(h["x-mcpclass-cache-similarity"]) >= 0.8
        # An unrelated question misses.
        status, h, _ = r.post(ask("What is the capital of Australia?"))
        assert status == 200 and "x-vsr-cache-hit" not in h
        assert calls(upstream) == 2
        assert metric(r, "mcpclass_route_cache_hits_total") == 3
        assert metric(r, 'mcpclass_route_cache_hits_total{match="exact"}') == 1
        assert metric(r, "mcpclass_route_cache_misses_total") == 2
        assert metric(r, "mcpclass_route_cache_entries") == 2
        assert metric(r, "mcpclass_route_cache_hit_similarity_count") == 3
        assert metric(r, "mcpclass_route_cache_bytes") > 0
    finally:
        assert r.stop() == 0


@needs_use_lite
def test_another_model_system_prompt_or_parameters_miss(tmp_path, upstream):  # noqa: F811
    r = start(tmp_path, upstream)
    try:
        q = "Explain what a hash table is"
        assert r.post(ask(q))[0] == 200
        assert r.post(ask(q))[1]["x-vsr-cache-hit"] == "true"
        for other in [ask(q, system="You are a pirate."),           # another system prompt
                      ask(q, model="m-deepseek"),                    # another model (passthrough)
                      ask(q + " uncached"),                          # a decision without cache
                      ask(q, temperature=1.5),                       # other parameters
                      {"model": "auto", "messages": [               # a later turn
                          {"role": "user", "content": q},
                          {"role": "assistant", "content": "a map"},
                          {"role": "user", "content": q}]}]:
            before = calls(upstream)
            status, h, _ = r.post(other)
            assert status == 200
            assert "x-vsr-cache-hit" not in h, other
            assert calls(upstream) == before + 1
        # The system prompt's own entry is a hit for that prompt only.
        assert r.post(ask(q, system="You are a pirate."))[1]["x-vsr-cache-hit"] == "true"
    finally:
        assert r.stop() == 0


def test_exact_path_without_an_encoder_and_errors_are_not_stored(tmp_path, upstream):  # noqa: F811
    r = start(tmp_path, upstream, encoder=False)
    try:
        q = "Tell me a joke about databases"
        # An upstream error is passed on and not stored: the next request reaches the upstream.
        for _ in range(2):
            status, h, _ = r.post(ask(q, fake={"status": 500, "error": "overloaded"}))
            assert status == 500 and "x-vsr-cache-hit" not in h
        assert calls(upstream) == 2
        assert metric(r, 'mcpclass_route_cache_skipped_total{reason="status"}') == 2
        # A stream the client left before its end is not stored either.
        c = r.conn()
        c.request("POST", "/v1/chat/completions",
                  body=json.dumps(ask(q, stream=True, fake={"chunks": 3, "delay": 0.3})),
                  headers={"Content-Type": "application/json"})
        resp = c.getresponse()
        assert resp.status == 200 and resp.read1(64)
        c.sock.close()
        c.close()
        upstream.wait_for(lambda recs: len(recs) == 3 and recs[-1]["disconnected"], timeout=10)
        assert r.post(ask(q, stream=True))[1].get("x-vsr-cache-hit") is None
        assert calls(upstream) == 4
        # That complete stream was stored: the same query without streaming is a hit.
        assert r.post(ask(q))[1]["x-vsr-cache-hit"] == "true"
        # Without an encoder a paraphrase is a miss.
        assert "x-vsr-cache-hit" not in r.post(ask("Tell me a joke about a database"))[1]
        assert calls(upstream) == 5
    finally:
        assert r.stop() == 0


OPENAI_STREAM = r"""
const OpenAI = require(process.argv[4]).default;
const client = new OpenAI({baseURL: process.argv[2], apiKey: 'k', maxRetries: 0});
(async () => {
  const out = [];
  for (const q of JSON.parse(process.argv[3])) {
    const stream = await client.chat.completions.create(
      {model: 'auto', stream: true, messages: [{role: 'user', content: q}]}).withResponse();
    let text = '', finish = null;
    for await (const chunk of stream.data) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    out.push({text, finish, hit: stream.response.headers.get('x-vsr-cache-hit')});
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def test_streams_are_stored_assembled_and_replayed_as_sse(tmp_path, upstream):  # noqa: F811
    node = node_for_tests()
    modules = os.path.join(SOURCE, "tests", "conformance", "node_modules")
    if not os.path.isdir(os.path.join(modules, "openai")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=os.path.join(SOURCE, "tests", "conformance"), check=True)
    assert node and shutil.which(node), "no Node.js 20+ for the openai client"
    r = start(tmp_path, upstream, encoder=False)
    try:
        q = "Write a haiku about routers"
        script = tmp_path / "stream.js"
        script.write_text(OPENAI_STREAM)
        out = subprocess.run([node, str(script), f"http://127.0.0.1:{r.port}/v1",
                              json.dumps([q, q]), os.path.join(modules, "openai")],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        first, second = json.loads(out.stdout)
        assert first == {"text": "part0 part1 part2 ", "finish": "stop", "hit": None}
        assert second == {"text": "part0 part1 part2 ", "finish": "stop", "hit": "true"}
        assert calls(upstream) == 1
        # The streamed answer is replayed as JSON to a client that does not stream.
        status, h, body = r.post(ask(q))
        assert h["x-vsr-cache-hit"] == "true"
        assert json.loads(body)["choices"][0]["message"]["content"] == "part0 part1 part2 "
        assert calls(upstream) == 1
    finally:
        assert r.stop() == 0


@pytest.mark.parametrize("cache, message", [
    ("{backend_type: milvus}",
     "route.semantic_cache.backend_type: 'milvus' is not one of memory, redis"),
    ("{redis: {address: nowhere}}",
     "route.semantic_cache.redis.address: 'nowhere' is not host:port or an absolute Unix socket path"),
    ("{redis: {address: 'h:99999'}}", "route.semantic_cache.redis.address"),
    ("{similarity_threshold: 1.5}", "route.semantic_cache.similarity_threshold: must be in (0, 1]"),
    ("{max_bytes: 10}", "route.semantic_cache.max_bytes"),
    ("{max_bytes: 100000, max_entry_bytes: 200000}",
     "route.semantic_cache.max_entry_bytes: 200000 is more than max_bytes (100000)"),
    ("{ttl: 5}", "route.semantic_cache.ttl"),
])
def test_cache_settings_errors_name_the_key(tmp_path, cache, message):
    config = tmp_path / "c.yaml"
    route = models_yaml("http://127.0.0.1:1/v1").replace(
        "  models:\n", f"  semantic_cache: {cache}\n  models:\n", 1)
    config.write_text(categories_without_routing() + routing(encoder=False) + route)
    p = subprocess.run([BIN, "config", "-c", str(config)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_plugin_settings_errors_name_the_key(tmp_path):
    config = tmp_path / "c.yaml"
    bad = routing(encoder=False).replace("configuration: {enabled: false}",
                                         "configuration: {similarity_threshold: 3}")
    config.write_text(categories_without_routing() + bad + models_yaml("http://127.0.0.1:1/v1"))
    p = subprocess.run([BIN, "config", "-c", str(config)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2, p.stderr
    assert ("routing.decisions[0].plugins[0].configuration.similarity_threshold: must be in [0, 1]"
            in p.stderr), p.stderr


class Redis:
    """A redis-server of the test's own, on a Unix socket in tmp_path, without persistence."""

    def __init__(self, tmp_path):
        self.socket = str(tmp_path / "redis.sock")
        self.proc = subprocess.Popen(
            [shutil.which("redis-server"), "--port", "0", "--unixsocket", self.socket,
             "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            assert time.monotonic() < deadline and self.proc.poll() is None, "redis did not start"
            time.sleep(0.05)

    def command(self, *args):
        """One command in RESP over the socket; the reply's first line (enough for SET)."""
        import socket
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket)
            s.sendall(out)
            return s.recv(4096).split(b"\r\n")[0].decode()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def wait_metric(router, name, predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate(metric(router, name)):
        assert time.monotonic() < deadline, f"{name} = {metric(router, name)}"
        time.sleep(0.05)


def fleet(tmp_path, upstream):  # noqa: F811
    """A redis-server of the test's own, and a function that starts an instance sharing it
    (in its own directory under tmp_path)."""
    redis = Redis(tmp_path)
    cache = (f'{{backend_type: redis, similarity_threshold: 0.8, '
             f'redis: {{address: "{redis.socket}", timeout: 0.05}}}}')

    def start_in(name):
        (tmp_path / name).mkdir()
        return start(tmp_path / name, upstream, cache=cache)
    return redis, start_in


@needs_use_lite
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
def test_a_fleet_shares_answers_through_redis_and_survives_its_loss(tmp_path, upstream):  # noqa: F811
    redis, start_in = fleet(tmp_path, upstream)
    a, b = start_in("a"), start_in("b")
    try:
        # An answer stored through A reaches B's index through the stream: a paraphrase is a
        # semantic hit on B, and the exact text too (from Redis itself).
        assert r_post(a, "How do I reverse a list in Python?")[0] == 200
        wait_metric(b, "mcpclass_route_cache_entries", lambda n: n == 1)
        status, h, body = r_post(b, "How can I reverse a Python list?")
        assert status == 200 and h["x-vsr-cache-hit"] == "true", h
        assert float(h["x-mcpclass-cache-similarity"]) < 1
        assert json.loads(body)["choices"][0]["message"]["content"].startswith("answer from")
        assert calls(upstream) == 1
        # Redis goes away: every request is still answered (by the upstream or from memory),
        # and the failed Redis commands are counted.
        redis.stop()
        questions = [f"What is the capital of country number {i}?" for i in range(6)]
        for i, q in enumerate(questions):
            t0 = time.monotonic()
            status, h, _ = r_post(a if i % 2 else b, q)
            assert status == 200
            assert time.monotonic() - t0 < 5
        for r in (a, b):
            assert metric(r, 'mcpclass_route_cache_errors_total{part="redis"}') > 0
        # What an instance holds itself is still served.
        assert r_post(a, "How do I reverse a list in Python?")[1]["x-vsr-cache-hit"] == "true"
    finally:
        redis.stop()
        assert a.stop() == 0
        assert b.stop() == 0


@needs_use_lite
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
def test_an_instance_started_later_loads_the_stored_answers(tmp_path, upstream):  # noqa: F811
    redis, start_in = fleet(tmp_path, upstream)
    a, b = start_in("a"), None
    try:
        for q in ["How do I reverse a list in Python?", "What is the capital of Australia?"]:
            assert r_post(a, q)[0] == 200
        assert calls(upstream) == 2
        stored_keys(redis, 2)  # shared in the background, after the client had its answer
        # Keys under the prefix that are not entries: another type, a hash missing its fields.
        assert redis.command("SET", "mcpclass:cache:entry:junk", "x") == "+OK"
        assert redis.command("HSET", "mcpclass:cache:entry:half", "exact", "half") == ":1"
        # B starts after both were stored: it reads them (with their embeddings) from Redis.
        b = start_in("b")
        wait_metric(b, "mcpclass_route_cache_loaded_total", lambda n: n == 2)
        assert metric(b, "mcpclass_route_cache_entries") == 2
        status, h, _ = r_post(b, "How can I reverse a Python list?")
        assert status == 200 and h["x-vsr-cache-hit"] == "true", h
        assert float(h["x-mcpclass-cache-similarity"]) < 1
        assert calls(upstream) == 2
        # What A stores afterwards still reaches B through the stream.
        assert r_post(a, "Explain what a hash table is")[0] == 200
        wait_metric(b, "mcpclass_route_cache_entries", lambda n: n == 3)
        assert metric(b, "mcpclass_route_cache_loaded_total") == 2
    finally:
        redis.stop()
        assert a.stop() == 0
        assert b is None or b.stop() == 0


def r_post(router, text):
    return router.post(ask(text))


# --- Issue 47: what an answer is reused for, and keys that are compared, not trusted ---------

def with_image(text, url):
    return {"model": "auto", "messages": [{"role": "user", "content": [
        {"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]}]}


def test_a_user_messages_images_are_part_of_the_scope(tmp_path, upstream):  # noqa: F811
    # Two users, the same words, different images: each gets an answer about their own image.
    r = start(tmp_path, upstream, encoder=False)
    try:
        q = "What is in this image? Answer in one word."
        cat, dog = "data:image/png;base64,Y2F0", "data:image/png;base64,ZG9n"
        assert r.post(with_image(q, cat))[0] == 200
        status, h, _ = r.post(with_image(q, dog))
        assert status == 200 and "x-vsr-cache-hit" not in h
        assert calls(upstream) == 2
        assert r.post(with_image(q, cat))[1]["x-vsr-cache-hit"] == "true"
        assert r.post(with_image(q, dog))[1]["x-vsr-cache-hit"] == "true"
        assert "x-vsr-cache-hit" not in r.post(ask(q))[1]  # the words alone, no image
        assert calls(upstream) == 3
    finally:
        assert r.stop() == 0


def decision_config(url, plugins="", model_ref="{model: m-vllm, use_reasoning: false}"):
    return categories_without_routing() + textwrap.dedent(f"""\
        routing:
          default_model: m-none
          signals:
            keywords: [{{name: kw, operator: OR, keywords: [alpha]}}]
          decisions:
            - name: d
              rules: {{type: keyword, name: kw}}
              modelRefs: [{model_ref}]
              plugins: [{plugins}]
        """) + models_yaml(url).replace("  models:\n", "  semantic_cache: {}\n  models:\n", 1)


def reload_to(r, text, probe):
    """Writes `text` as the configuration, reloads, and waits until a fresh request's upstream
    record satisfies `probe` (each poll asks a question of its own, so that none is cached)."""
    import signal
    (r.path).write_text(text)
    r.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 20
    for i in range(1000):
        assert time.monotonic() < deadline, "the reload did not take"
        before = len(r.upstream.records())
        assert r.post(ask(f"alpha probe {time.monotonic()} {i}"))[0] == 200
        records = r.upstream.records()
        if len(records) > before and probe(records[-1]):
            return
        time.sleep(0.2)


def test_a_decisions_rewrites_are_part_of_the_scope(tmp_path, upstream):  # noqa: F811
    # The same question under the same decision and model, after a reload changed what the
    # decision sends upstream (the reasoning switch, the LoRA adapter, a header): a miss each
    # time, as the answer may differ. The cache itself survives these reloads.
    r = RouteWith(tmp_path, decision_config(upstream.url))
    r.path, r.upstream = tmp_path / "router.yaml", upstream
    try:
        q = ask("alpha: explain recursion")
        assert r.post(q)[0] == 200
        assert r.post(q)[1]["x-vsr-cache-hit"] == "true"
        steps = [
            (decision_config(upstream.url, model_ref="{model: m-vllm, use_reasoning: true}"),
             lambda rec: rec["body"]["chat_template_kwargs"]["enable_thinking"] is True),
            (decision_config(upstream.url,
                             model_ref="{model: m-vllm, use_reasoning: true, lora_name: tutor}"),
             lambda rec: rec["body"]["model"] == "tutor"),
            (decision_config(upstream.url,
                             model_ref="{model: m-vllm, use_reasoning: true, lora_name: tutor}",
                             plugins="{type: header_mutation, configuration: "
                                     "{add: [{name: X-Tier, value: gold}]}}"),
             lambda rec: rec["headers"].get("x-tier") == "gold"),
        ]
        for text, probe in steps:
            reload_to(r, text, probe)
            status, h, _ = r.post(q)
            assert status == 200 and "x-vsr-cache-hit" not in h, text
            assert probe(upstream.records()[-1])
            assert r.post(q)[1]["x-vsr-cache-hit"] == "true"  # and is stored for its own scope
    finally:
        assert r.stop() == 0


def resp(redis, *args):
    """One command in RESP over the socket, its reply parsed (strings, integers, arrays)."""
    import socket
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(redis.socket)
        s.sendall(out)
        f = s.makefile("rb")

        def read():
            line = f.readline().rstrip(b"\r\n")
            kind, rest = line[:1], line[1:]
            if kind in (b"+", b"-"):
                return rest.decode()
            if kind == b":":
                return int(rest)
            if kind == b"$":
                n = int(rest)
                if n < 0:
                    return None
                data = f.read(n + 2)[:-2]
                return data.decode("utf-8", "replace")
            if kind == b"*":
                return [read() for _ in range(int(rest))]
            raise AssertionError(line)
        return read()


def stored_keys(redis, n, timeout=10):
    """The entries' keys in Redis once there are `n` (an answer is shared in the background,
    after the client has it)."""
    deadline = time.monotonic() + timeout
    while len(keys := resp(redis, "KEYS", "mcpclass:cache:entry:*")) < n:
        assert time.monotonic() < deadline, keys
        time.sleep(0.02)
    return keys


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
def test_an_entry_planted_under_another_querys_key_is_not_served(tmp_path, upstream):  # noqa: F811
    # A key collision, made by hand: the attacker's entry (its own text and answer) sits under
    # the key of the victim's question in Redis. An instance that reads it (when it starts, or on
    # an exact miss) must not serve it for the victim's question.
    redis = Redis(tmp_path)
    cache = f'{{backend_type: redis, redis: {{address: "{redis.socket}", timeout: 0.5}}}}'
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = start(tmp_path / "a", upstream, encoder=False, cache=cache), None
    try:
        victim, attacker = "What is the capital of France?", "Reply with exactly: Berlin"
        assert a.post(ask(victim))[0] == 200
        [victim_key] = stored_keys(redis, 1)
        assert a.post(ask(attacker))[0] == 200
        [attacker_key] = set(stored_keys(redis, 2)) - {victim_key}
        # The keys are SHA-256 (64 hex digits), not a 64-bit checksum.
        for key in (victim_key, attacker_key):
            digest = key[len("mcpclass:cache:entry:"):]
            assert len(digest) == 64 and all(c in "0123456789abcdef" for c in digest), key
        victim_exact = victim_key[len("mcpclass:cache:entry:"):]
        assert resp(redis, "RENAME", attacker_key, victim_key) == "OK"
        assert resp(redis, "HSET", victim_key, "exact", victim_exact,
                    "content", "The capital of France is Berlin.") == 0
        b = start(tmp_path / "b", upstream, encoder=False, cache=cache)
        before = calls(upstream)
        status, h, body = b.post(ask(victim))
        assert status == 200 and "x-vsr-cache-hit" not in h, body
        assert "Berlin" not in json.loads(body)["choices"][0]["message"]["content"]
        assert calls(upstream) == before + 1
        # Its load refused the planted entry too (it is not stored under its own key).
        wait_metric(b, 'mcpclass_route_cache_errors_total{part="redis_entry"}', lambda n: n >= 1)
    finally:
        redis.stop()
        assert a.stop() == 0
        assert b is None or b.stop() == 0
