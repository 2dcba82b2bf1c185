"""Tests of the Python binding against the built libmcpclass.so (MCPCLASS_LIBRARY)."""

import json
import math
import os
import socket
import threading
import urllib.error
import urllib.request

import pytest

import mcpclass

CONFIG = """
categories:
  - name: math
    description: Math questions
    system_prompt: You are a math expert.
    model: math-model
    use_reasoning: true
  - name: general
    description: Everything else
    system_prompt: You are helpful.
classifier:
  kind: rules
  fallback: general
  rules:
    math:
      keywords: [algebra, derivative]
"""


@pytest.fixture
def classifier():
    with mcpclass.Classifier() as c:
        yield c


def test_version():
    assert mcpclass.version() == "0.1.0"
    assert mcpclass.ABI_VERSION == 1


def test_classify(classifier):
    r = classifier.classify("What is the derivative of x squared?")
    assert r.category == "math" and r.class_index == 0 and r.model
    assert r.probabilities is None
    r = classifier.classify("What is the derivative of x squared?", probabilities=True)
    assert len(r.probabilities) == 5
    assert math.isclose(sum(r.probabilities), 1.0)
    assert r.confidence == max(r.probabilities)
    assert math.isclose(mcpclass.entropy(r.probabilities), r.entropy)
    assert r.decision.reason and r.decision.strategy and r.decision.top_categories


def test_classify_errors(classifier):
    with pytest.raises(mcpclass.InvalidTextError) as e:
        classifier.classify("   ")
    assert e.value.code == -4 and e.value.status == "MCPC_ERR_INVALID_TEXT"
    assert "empty" in e.value.message


def test_config_errors(tmp_path):
    with pytest.raises(mcpclass.ConfigError) as e:
        mcpclass.Classifier("categories: 5\n")
    assert e.value.path == "categories"
    with pytest.raises(mcpclass.ConfigError):
        mcpclass.Classifier.from_file(str(tmp_path / "missing.yaml"))


def test_from_file_and_categories(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    with mcpclass.Classifier.from_file(str(path)) as c:
        assert c.category_count == 2
        cats = c.categories()
        assert [x.name for x in cats] == ["math", "general"]
        assert cats[0].model == "math-model" and cats[0].use_reasoning is True
        assert cats[1].model is None and cats[1].use_reasoning is None
        assert cats[1].system_prompt == "You are helpful."
        r = c.classify("Explain algebra")
        assert r.model == "math-model" and r.use_reasoning
        doc = json.loads(c.categories_json())
        assert doc["categories"] == ["math", "general"]


def test_classify_json(classifier):
    wire = json.loads(classifier.classify_json("Solve 2x + 3 = 7", probabilities=True))
    assert set(wire) == {"class", "confidence", "model", "use_reasoning", "probabilities",
                         "entropy"}
    tool = json.loads(classifier.classify_json("Solve 2x + 3 = 7", tool_result=True))
    assert tool["isError"] is False
    assert json.loads(tool["content"][0]["text"]) == tool["structuredContent"]


def test_batch(classifier):
    rs = classifier.classify_batch(["What is 2+2?", "Who won the battle of Hastings in 1066?"])
    assert [r.category for r in rs] == ["math", "history"]
    assert classifier.classify_batch([]) == []
    with pytest.raises(mcpclass.InvalidTextError, match=r"texts\[1\]"):
        classifier.classify_batch(["fine", ""])


def test_decide():
    d = mcpclass.decide([0.98, 0.01, 0.01], ["math", "science", "general"],
                        {"math": True, "science": False})
    assert d.use_reasoning and d.top_categories[0].name == "math"
    assert mcpclass.decide([], []).top_categories == []
    with pytest.raises(mcpclass.InvalidArgumentError):
        mcpclass.decide([1.0], [])
    with pytest.raises(mcpclass.InvalidArgumentError):
        mcpclass.decide([1.0], ["a"], threshold=float("nan"))


def test_close():
    c = mcpclass.Classifier()
    c.close()
    c.close()
    with pytest.raises(ValueError):
        c.classify("x")


def classify_from_threads(classifier, texts, threads=8, rounds=100):
    """Classifies every text `rounds` times from each of `threads` threads at once; returns
    the texts that got another category than expected."""
    failures = []

    def work():
        for _ in range(rounds):
            for text, want in texts.items():
                if classifier.classify(text).category != want:
                    failures.append(text)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return failures


def test_threads(classifier):
    texts = {"What is the integral of sin(x)?": "math",
             "Who was the first emperor of Rome?": "history",
             "How does photosynthesis work in plants?": "science"}
    assert classify_from_threads(classifier, texts) == []


def test_callback_classifier():
    def scores(text):
        if "fail" in text:
            raise RuntimeError("model offline")
        return [3.0, 1.0] if "zero" in text else [0.0, 1.0]

    with mcpclass.Classifier.from_callback(scores, CONFIG) as c:
        r = c.classify("count to zero")
        assert r.category == "math" and math.isclose(r.confidence, 0.75)
        assert r.model == "math-model"
        with pytest.raises(mcpclass.ClassifyError, match="model offline"):
            c.classify("fail")
        # Called from several threads at once.
        out = []
        threads = [threading.Thread(target=lambda: out.append(c.classify("zero").class_index))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == [0] * 8

    with mcpclass.Classifier.from_callback(lambda text: [1.0]) as c:  # 5 categories
        with pytest.raises(mcpclass.ClassifyError, match="expected 5 scores"):
            c.classify("x")


def test_server_tools():
    with mcpclass.Server() as s:
        @s.tool(schema={"type": "object", "properties": {"city": {"type": "string"}},
                        "required": ["city"]})
        def weather(args):
            """Weather by city"""
            if args["city"] == "Atlantis":
                raise LookupError("no such city")
            return {"city": args["city"], "celsius": 21}

        s.add_tool("plain", lambda args: "hello")
        tools = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]["tools"]
        names = {t["name"]: t for t in tools}
        assert {"classify_text", "list_categories", "weather", "plain"} <= set(names)
        assert names["weather"]["description"] == "Weather by city"

        def call(name, arguments):
            return s.call({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})["result"]

        assert call("weather", {"city": "Paris"})["structuredContent"] == {"city": "Paris",
                                                                           "celsius": 21}
        r = call("weather", {"city": "Atlantis"})
        assert r["isError"] and r["content"][0]["text"] == "no such city"
        assert call("weather", {"city": 5})["isError"]  # schema validation
        assert call("plain", {})["content"][0]["text"] == "hello"
        r = call("classify_text", {"text": "What is 2+2?"})
        assert r["structuredContent"]["class"] == 0
        assert s.call({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None

        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(
            call("weather", {"city": f"c{i}"})["structuredContent"]["city"])) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == sorted(f"c{i}" for i in range(8))

        with pytest.raises(mcpclass.InvalidArgumentError):
            s.add_tool("", lambda a: "x")
        s.remove_tool("plain")
        with pytest.raises(mcpclass.NotFoundError):
            s.remove_tool("plain")


RELOAD_CONFIG = """
categories:
  - {name: alpha, description: A, system_prompt: "You are alpha.", model: MODEL}
  - {name: general, description: G, system_prompt: "You are general.", model: model-g}
classifier: {kind: rules, rules: {alpha: {keywords: [zebra]}}}
"""


def test_server_reload():
    def classify(s):
        r = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "classify_text", "arguments": {"text": "zebra"}}})
        return r["result"]["structuredContent"]["model"]

    with mcpclass.Server(RELOAD_CONFIG.replace("MODEL", "model-a")) as s:
        assert classify(s) == "model-a"
        assert s.reload(RELOAD_CONFIG.replace("MODEL", "model-b")) == 2
        assert classify(s) == "model-b"
        with pytest.raises(mcpclass.ConfigError, match="classifier.kind"):
            s.reload("classifier: {kind: bogus}\n")
        assert classify(s) == "model-b"  # the refused configuration changed nothing
        assert s.reload(None) == 3  # the embedded default: its categories, prompts and tools
        prompts = s.call({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})["result"]
        assert "alpha" not in {p["name"] for p in prompts["prompts"]}


def test_server_with_callback_classifier():
    c = mcpclass.Classifier.from_callback(lambda text: [0, 0, 1, 0, 0])
    with mcpclass.Server(classifier=c) as s:
        r = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "classify_text", "arguments": {"text": "x"}}})
        assert r["result"]["structuredContent"]["class"] == 2
    c.close()


def test_server_http():
    with mcpclass.Server() as s:
        port = s.start_http("127.0.0.1", 0)
        assert port > 0 and s.port == port
        with pytest.raises(mcpclass.StateError):
            s.start_http("127.0.0.1", 0)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as resp:
            assert json.loads(resp.read())["categories"] == [
                "math", "science", "technology", "history", "general"]
        with mcpclass.Server() as other:
            with pytest.raises(mcpclass.TransportError):
                other.start_http("127.0.0.1", port)
        s.stop()
        assert s.port == 0
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_server_http_auth_from_the_config():
    """server.http.auth reaches the server through the binding: off loopback it needs tokens,
    and with them every request but the bare /health needs one."""
    with mcpclass.Server() as s:
        with pytest.raises(mcpclass.TransportError) as e:
            s.start_http("0.0.0.0", 0)
        assert "allow_unauthenticated" in e.value.message
    os.environ["MCPCLASS_BINDING_TOKEN"] = "b1nding-token"
    auth = CONFIG + "server:\n  http:\n    auth: {bearer_tokens: ['${MCPCLASS_BINDING_TOKEN}']}\n"
    with mcpclass.Server(auth) as s:
        port = s.start_http("0.0.0.0", 0)
        call = json.dumps({"name": "classify_text",
                           "arguments": {"text": "an algebra question"}}).encode()

        def post(headers):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp/tools/call", data=call,
                                         headers={"Content-Type": "application/json", **headers})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as err:
                return err.code, None

        assert post({})[0] == 401
        assert post({"Authorization": "Bearer wrong"})[0] == 401
        status, body = post({"Authorization": "Bearer b1nding-token", "Host": "mcp.example.com"})
        assert status == 200 and body["structuredContent"]["class"] == 0
    del os.environ["MCPCLASS_BINDING_TOKEN"]


def test_server_stdio():
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    with mcpclass.Server() as s:
        s.start_stdio(in_r, out_w)
        reader = os.fdopen(out_r, "r")
        os.write(in_w, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert json.loads(reader.readline())["id"] == 1
        os.close(in_w)
        s.wait_stdio()
        reader.close()
    os.close(in_r)
    os.close(out_w)


def test_router_example(tmp_path):
    """The router example's evaluation is the library's (mcpclass.Router): the default
    categories' decision and the body for the model's upstream (its name, the category's prompt
    replacing the first system message)."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "router.py")
    spec = importlib.util.spec_from_file_location("router_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    config = tmp_path / "router.json"
    config.write_text(json.dumps({"route": {"system_prompt": "replace", "models": {
        "openai/gpt-oss-20b": {"base_url": "http://127.0.0.1:9/v1", "upstream_model": "gpt-up"}}}}))
    router = example.Router(str(config))
    req = {"model": "auto", "messages": [{"role": "system", "content": "generic"},
                                         {"role": "user", "content": "Who won the battle of Hastings in 1066?"}]}
    ev = router.evaluate(json.dumps(req).encode())
    assert ev["action"] == "forward" and ev["category"] == "history"
    assert ev["model"] == "openai/gpt-oss-20b" and ev["body"]["model"] == "gpt-up"
    messages = ev["body"]["messages"]
    assert len(messages) == 2 and "history expert" in messages[0]["content"]
    with pytest.raises(example.HttpError) as e:
        router.evaluate(b"[1]")
    assert e.value.status == 400
    router.close()


def test_remote_classifier():
    """A classifier of kind remote on a binding-made server: the server's categories and
    answers; once the server is gone, UnavailableError naming it."""
    with mcpclass.Server(CONFIG) as s:
        port = s.start_http("127.0.0.1", 0)
        remote = (f"classifier:\n  kind: remote\n  remote: {{url: 'http://127.0.0.1:{port}/mcp',"
                  " timeout: 5, max_retries: 0, fallback_category: general}\n")
        with mcpclass.Classifier(remote) as c:
            assert [cat.name for cat in c.categories()] == ["math", "general"]
            assert c.classify("an algebra question").category == "math"
            s.stop()
            with pytest.raises(mcpclass.UnavailableError) as e:
                c.classify("an algebra question")
            assert e.value.status == "MCPC_ERR_UNAVAILABLE"
            assert f"127.0.0.1:{port}" in e.value.message
    # Nothing listens there any more: the classifier cannot be made.
    with pytest.raises(mcpclass.UnavailableError) as e:
        mcpclass.Classifier(remote)
    assert f"127.0.0.1:{port}" in e.value.message


LEARNED_TEXTS = {"Compute the integral of x cubed": "math",
                 "How do vaccines train the immune system?": "science",
                 "How do I set up a Kubernetes cluster?": "technology",
                 "What caused the fall of the Berlin Wall?": "history"}


def knn_config():
    """models/router5-knn.yaml, the embedding kNN classifier over tests/data/training_data.csv
    (USE-lite from the cache models/fetch-use-lite.sh fills; ctest runs it first), with the
    example path made absolute."""
    root = os.environ.get("MCPCLASS_TEST_SOURCE_DIR", "")
    with open(os.path.join(root, "models", "router5-knn.yaml"), encoding="utf-8") as f:
        text = f.read()
    assert "examples: tests/" in text
    return text.replace("examples: tests/", f"examples: {root}/tests/")


def test_learned_classifier():
    """A learned (libtorch) classifier through the binding: kNN over USE-lite embeddings, from
    several threads, and behind a Server. ctest says whether the torch component is built."""
    torch = os.environ.get("MCPCLASS_TEST_TORCH")
    if torch is None:
        pytest.skip("MCPCLASS_TEST_TORCH is not set (ctest sets it to the build's "
                    "MCPCLASS_WITH_LEARNED)")
    config = knn_config()
    if torch != "1":
        # Without the component the library refuses the kind, naming what is missing.
        with pytest.raises(mcpclass.ConfigError, match="MCPCLASS_WITH_LEARNED=OFF"):
            mcpclass.Classifier(config)
        pytest.skip("the learned classifiers are not built (MCPCLASS_WITH_LEARNED=OFF)")
    with mcpclass.Classifier(config) as c:
        assert [cat.name for cat in c.categories()][:2] == ["math", "science"]
        for text, want in LEARNED_TEXTS.items():
            r = c.classify(text, probabilities=True)
            assert r.category == want, (text, r)
            assert len(r.probabilities) == 5 and math.isclose(sum(r.probabilities), 1.0)
            assert r.confidence == max(r.probabilities) > 0.5
        assert [r.category for r in c.classify_batch(list(LEARNED_TEXTS))] == \
            list(LEARNED_TEXTS.values())
        assert classify_from_threads(c, LEARNED_TEXTS, threads=4, rounds=5) == []
        with mcpclass.Server(config, c) as s:
            answer = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "classify_text",
                                        "arguments": {"text": "Compute the integral of x cubed"}}})
            assert json.loads(answer["result"]["content"][0]["text"])["class"] == 0
