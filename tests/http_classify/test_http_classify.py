"""The http_classify contract (docs/http-classify.md), both sides, over real sockets on 127.0.0.1.

Server: `mcpclass serve` answers POST /classify (one text, a list) with the full distribution as
[{label, score}] sorted by score, POST /classify/spans with the token-classification pipeline's
spans, refuses bad input with 400/405/413/415 and a JSON error naming the problem, and asks for
the bearer key as on every endpoint. The Semantic Router's client (router_client/main.go, its
http_classifier.go re-stated with Go's standard library) accepts the answers.
Client: `kind: remote, protocol: http_classify` classifies through another `mcpclass serve` and
through a tiny server answering exactly the pipeline's shape; a server that lies is refused with
an error naming what it broke, and `kind: composite` falls back to rules.

Run by ctest (http_classify.process) with MCPCLASS_BIN set; Debian's python3, pytest and go.
"""
import http.client
import http.server
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from test_cli import BIN, MATH_QUERY, Serve, request  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "transformers", "fixtures")
CATEGORIES = ["math", "science", "technology", "history", "general"]
KEY = "s3cret-key-for-tests"


def serve(tmp_path, document="", *args):
    path = tmp_path / f"serve-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(document)
    return Serve("--http", "127.0.0.1:0", "--config", str(path), *args)


@pytest.fixture
def rules_server(tmp_path):
    s = serve(tmp_path)
    yield s
    s.kill()


def mcp_distribution(port, text, headers=None):
    status, _, body = request(port, "POST", "/mcp/tools/call",
                              {"name": "classify_text",
                               "arguments": {"text": text, "with_probabilities": True}},
                              headers=headers)
    assert status == 200, body
    return json.loads(json.loads(body)["content"][0]["text"])["probabilities"]


def check_pipeline_labels(answer, distribution):
    assert [set(item) for item in answer] == [{"label", "score"}] * len(CATEGORIES)
    scores = [item["score"] for item in answer]
    assert scores == sorted(scores, reverse=True)
    assert abs(sum(scores) - 1) < 1e-9
    assert {item["label"]: item["score"] for item in answer} == dict(zip(CATEGORIES, distribution))


def test_serve_answers_one_text_and_a_list(rules_server):
    port = rules_server.port
    status, headers, body = request(port, "POST", "/classify", {"inputs": MATH_QUERY})
    assert status == 200, body
    assert headers["content-type"] == "application/json"
    answer = json.loads(body)
    check_pipeline_labels(answer, mcp_distribution(port, MATH_QUERY))
    assert answer[0]["label"] == "math"

    texts = [MATH_QUERY, "Who was the first emperor of Rome?", "hello"]
    status, _, body = request(port, "POST", "/classify", {"inputs": texts})
    assert status == 200, body
    answers = json.loads(body)
    assert len(answers) == 3
    for text, answer in zip(texts, answers):
        check_pipeline_labels(answer, mcp_distribution(port, text))
    assert answers[1][0]["label"] == "history"

    # Counted like classify_text, and under their own route label.
    _, _, metrics = request(port, "GET", "/metrics")
    assert 'route="classify"' in metrics
    assert 'mcpclass_classifications_total{category="history"}' in metrics


BAD_INPUTS = [
    # (body, content type, status, words of the error)
    ({"inputs": "x"}, "text/plain", 415, "Content-Type must be application/json (got 'text/plain')"),
    ({"inputs": "x"}, None, 415, "Content-Type must be application/json (got none)"),
    ("{not json", "application/json", 400, "the body is not JSON"),
    ([MATH_QUERY], "application/json", 400, "the body must be a JSON object"),
    ({"text": "x"}, "application/json", 400, "unknown key 'text' (the body takes inputs)"),
    ({}, "application/json", 400, "inputs is required"),
    ({"inputs": 5}, "application/json", 400,
     'inputs must be a string, a {"text", "text_pair"} pair or a list of either'),
    ({"inputs": {"text": "a"}}, "application/json", 400, 'inputs: a pair needs both "text" and "text_pair"'),
    ({"inputs": {"text": "a", "text_pair": "b", "label": 1}}, "application/json", 400,
     "inputs: unknown key 'label'"),
    ({"inputs": [{"text": "a", "text_pair": "b"}, "c"]}, "application/json", 400,
     "inputs[1]: inputs mixes texts and {text, text_pair} pairs"),
    ({"inputs": {"text": "a", "text_pair": 3}}, "application/json", 400, "inputs.text_pair must be a string"),
    ({"inputs": {"text": "a", "text_pair": "b"}}, "application/json", 400,
     "this server's classifier (rules) classifies one text"),
    ({"inputs": []}, "application/json", 400, "inputs is an empty list"),
    ({"inputs": ["ok", 7]}, "application/json", 400, "inputs[1] must be a string"),
    ({"inputs": ["ok", "  "]}, "application/json", 400, "inputs[1]: text must not be empty"),
    ({"inputs": "x" * 10001}, "application/json", 400, "inputs: text is 10001 characters long"),
    ({"inputs": ["a"] * 129}, "application/json", 413, "inputs has 129 texts; the limit is 128"),
    ({"inputs": "x", "parameters": {}}, "application/json", 400, "unknown key 'parameters'"),
]


@pytest.mark.parametrize("body,content_type,status,words", BAD_INPUTS)
def test_serve_refuses_bad_input_naming_the_problem(rules_server, body, content_type, status,
                                                    words):
    conn = http.client.HTTPConnection("127.0.0.1", rules_server.port, timeout=30)
    conn.request("POST", "/classify", body if isinstance(body, str) else json.dumps(body),
                 headers={"Content-Type": content_type} if content_type else {})
    response = conn.getresponse()
    got, reply = response.status, response.read().decode()
    conn.close()
    assert got == status, reply
    error = json.loads(reply)
    assert words in error["error"], error
    assert error["error_type"]


@pytest.mark.parametrize("parameters,words", [
    ({"top_k": 3}, "parameters.top_k is not a parameter of /classify/spans"),
    ({"aggregation_strategy": 5}, "parameters.aggregation_strategy must be a string"),
    ([], "parameters must be an object"),
])
def test_serve_refuses_bad_span_parameters(rules_server, parameters, words):
    # Checked before the server looks for its token classifier (this one has none).
    status, _, body = request(rules_server.port, "POST", "/classify/spans",
                              {"inputs": "Zoë", "parameters": parameters})
    assert status == 400 and words in json.loads(body)["error"], body


def softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    return [v / sum(e) for v in e]


def test_serve_answers_sentence_pairs_as_the_pipeline_takes_them(tmp_path):
    """{"text", "text_pair"} (and lists of them) through a BERT checkpoint's pair template: the
    probabilities of tests/transformers/make_pair_fixtures.py's reference, the same through
    classify_text's text_pair, which tools/list offers for this classifier only."""
    with open(os.path.join(FIXTURES, "pair-reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    logits = ref["models"]["bert"]["logits"]
    s = serve(tmp_path, f"classifier:\n  kind: transformer\n  model: {FIXTURES}/bert-f32\n")
    try:
        picked = [1, 3, 7, 12]  # pair 0 starts with the empty text, which is refused
        status, _, body = request(s.port, "POST", "/classify",
                                  {"inputs": {"text": ref["pairs"][3][0], "text_pair": ref["pairs"][3][1]}})
        assert status == 200, body
        one = {item["label"]: item["score"] for item in json.loads(body)}
        want = dict(zip(ref["labels"], softmax(logits[3])))
        assert max(abs(one[k] - want[k]) for k in want) < 1e-4
        status, _, body = request(s.port, "POST", "/classify", {
            "inputs": [{"text": ref["pairs"][i][0], "text_pair": ref["pairs"][i][1]} for i in picked]})
        assert status == 200, body
        for i, answer in zip(picked, json.loads(body)):
            got = {item["label"]: item["score"] for item in answer}
            want = dict(zip(ref["labels"], softmax(logits[i])))
            assert max(abs(got[k] - want[k]) for k in want) < 1e-4, i
        status, _, body = request(s.port, "POST", "/mcp/tools/call", {
            "name": "classify_text",
            "arguments": {"text": ref["pairs"][3][0], "text_pair": ref["pairs"][3][1],
                          "with_probabilities": True}})
        assert status == 200, body
        tool = json.loads(json.loads(body)["content"][0]["text"])["probabilities"]
        assert max(abs(a - b) for a, b in zip(tool, softmax(logits[3]))) < 1e-4
        status, _, body = request(s.port, "POST", "/mcp/tools/list", {})
        tools = {t["name"]: t for t in json.loads(body)["tools"]}
        assert "text_pair" in tools["classify_text"]["inputSchema"]["properties"]
    finally:
        s.kill()


def test_classify_text_of_a_rules_server_neither_offers_nor_takes_text_pair(rules_server):
    status, _, body = request(rules_server.port, "POST", "/mcp/tools/list", {})
    tools = {t["name"]: t for t in json.loads(body)["tools"]}
    assert "text_pair" not in tools["classify_text"]["inputSchema"]["properties"]
    status, _, body = request(rules_server.port, "POST", "/mcp/tools/call",
                              {"name": "classify_text", "arguments": {"text": "a", "text_pair": "b"}})
    result = json.loads(body)
    assert result["isError"] is True
    assert "(rules) classifies one text" in result["content"][0]["text"]


def test_serve_refuses_other_methods_large_bodies_and_missing_spans(tmp_path):
    s = serve(tmp_path, "server:\n  http:\n    max_body_bytes: 300\n")
    try:
        status, headers, body = request(s.port, "GET", "/classify")
        assert status == 405 and headers["allow"] == "POST", body
        status, _, body = request(s.port, "POST", "/classify", {"inputs": "x" * 400})
        assert status == 413
        assert json.loads(body)["error_type"] == "payload_too_large"
        # No token_classifier configured: /classify/spans says so.
        status, _, body = request(s.port, "POST", "/classify/spans", {"inputs": "Zoë"})
        assert status == 404 and "no token_classifier" in json.loads(body)["error"]
    finally:
        s.kill()


def keyed_server(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTP_CLASSIFY_KEY", KEY)
    return serve(tmp_path,
                 'server:\n  http:\n    auth:\n      bearer_tokens: ["${HTTP_CLASSIFY_KEY}"]\n')


def test_serve_asks_for_the_bearer_key(tmp_path, monkeypatch):
    s = keyed_server(tmp_path, monkeypatch)
    try:
        status, headers, _ = request(s.port, "POST", "/classify", {"inputs": MATH_QUERY})
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        status, _, _ = request(s.port, "POST", "/classify", {"inputs": MATH_QUERY},
                               headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, _, body = request(s.port, "POST", "/classify", {"inputs": MATH_QUERY},
                                  headers={"Authorization": f"Bearer {KEY}"})
        assert status == 200 and json.loads(body)[0]["label"] == "math"
    finally:
        s.kill()


# --- the Semantic Router's client against `mcpclass serve` -------------------------------------

def router_client(*args):
    """router_client/main.go run with Debian's go, offline (no module proxy; the module has no
    requirements)."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed")
    build = os.environ.get("MCPCLASS_GO_CACHE") or os.path.join(HERE, "..", "..", "build", "go")
    env = dict(os.environ, GOFLAGS="", GOPROXY="off", GOTOOLCHAIN="local", CGO_ENABLED="0",
               GOCACHE=os.path.join(build, "cache"), GOPATH=os.path.join(build, "path"))
    return subprocess.run([go, "run", ".", *args], cwd=os.path.join(HERE, "router_client"),
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_routers_client_accepts_what_serve_answers(tmp_path, monkeypatch):
    s = keyed_server(tmp_path, monkeypatch)
    try:
        base = f"http://127.0.0.1:{s.port}"
        labels = ",".join(CATEGORIES)
        out = router_client("-base", base, "-key", KEY, "-labels", labels, MATH_QUERY)
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)["probabilities"]
        want = mcp_distribution(s.port, MATH_QUERY, {"Authorization": f"Bearer {KEY}"})
        assert all(abs(g - w) < 1e-6 for g, w in zip(got, want))  # float32 on the router's side
        # Its errors are those of the contract: the status without the key, the labels it lacks.
        out = router_client("-base", base, "-labels", labels, MATH_QUERY)
        assert out.returncode == 1 and "endpoint returned status 401" in out.stderr
        out = router_client("-base", base, "-key", KEY, "-labels", labels + ",sports", MATH_QUERY)
        assert out.returncode == 1 and 'missing label "sports"' in out.stderr
    finally:
        s.kill()


# --- kind: remote, protocol: http_classify -----------------------------------------------------

def classify(tmp_path, document, text=MATH_QUERY):
    path = tmp_path / "client.yaml"
    path.write_text(document)
    return subprocess.run([BIN, "classify", "-p", "-c", str(path), text], capture_output=True,
                          text=True, timeout=60)


def remote_document(port, extra="", kind="remote"):
    return (f"classifier:\n  kind: {kind}\n  remote:\n    protocol: http_classify\n"
            f"    url: http://127.0.0.1:{port}\n    max_retries: 0\n{extra}")


def test_remote_http_classify_through_another_serve(tmp_path, monkeypatch):
    s = keyed_server(tmp_path, monkeypatch)
    try:
        out = classify(tmp_path, remote_document(s.port, "    access_key: ${HTTP_CLASSIFY_KEY}\n"))
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        want = mcp_distribution(s.port, MATH_QUERY, {"Authorization": f"Bearer {KEY}"})
        assert got["category"] == "math"
        # The fallback category (other) joins the configured ones with probability 0.
        assert got["probabilities"][:5] == pytest.approx(want) and got["probabilities"][5] == 0
        # Without the key: refused by the server, said by the client.
        out = classify(tmp_path, remote_document(s.port))
        assert out.returncode != 0
        assert "answered status 401" in out.stderr, out.stderr
    finally:
        s.kill()


class PipelineServer(http.server.ThreadingHTTPServer):
    """Answers POST /classify exactly as a transformers text-classification pipeline served over
    HTTP does (top_k=None): [{label, score}], highest first; `lie` answers one label summing to
    0.7 instead; `huge` answers 1 MiB instead: an error page ("error", status 500) or a JSON
    object ("object", status 200)."""

    def __init__(self, lie=False, huge=None):
        super().__init__(("127.0.0.1", 0), PipelineHandler)
        self.lie = lie
        self.huge = huge
        self.requests = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]


class PipelineHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, dict(self.headers), body))
        if self.server.huge:
            # "é" throughout: a cut at a byte count would split one.
            page = "overloaded: " + "é" * (1 << 19)
            data = (page if self.server.huge == "error" else json.dumps({"error": page},
                                                                          ensure_ascii=False))
            data = data.encode()
            self.send_response(500 if self.server.huge == "error" else 200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if self.server.lie:
            answer = [{"label": "LABEL_2", "score": 0.7}]
        else:
            logits = [0.1, 0.2, 2.5, 0.3, 0.4]  # technology
            total = sum(math.exp(x) for x in logits)
            answer = sorted(({"label": f"LABEL_{i}", "score": math.exp(x) / total}
                             for i, x in enumerate(logits)), key=lambda a: -a["score"])
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


LABELS = "    labels: {" + ", ".join(f"LABEL_{i}: {c}" for i, c in enumerate(CATEGORIES)) + "}\n"


def test_remote_http_classify_through_a_pipeline_server(tmp_path):
    server = PipelineServer()
    try:
        out = classify(tmp_path, remote_document(server.port, LABELS + "    access_key: k1\n"),
                       "What is a GPU?")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert got["category"] == "technology" and got["class"] == 2
        assert sum(got["probabilities"]) == pytest.approx(1)
        path, headers, body = server.requests[0]
        assert path == "/classify" and body == {"inputs": "What is a GPU?"}
        assert headers["Content-Type"] == "application/json"
        assert headers["Accept"] == "application/json"
        assert headers["Authorization"] == "Bearer k1"
        # Without the label map the server's labels are no category: the error names one.
        out = classify(tmp_path, remote_document(server.port))
        assert out.returncode != 0
        assert "label 'LABEL_2' is not a configured category" in out.stderr, out.stderr
    finally:
        server.shutdown()


def test_a_lying_server_is_named_and_composite_falls_back(tmp_path):
    server = PipelineServer(lie=True)
    try:
        out = classify(tmp_path, remote_document(server.port, LABELS))
        assert out.returncode != 0
        assert "it has 1 label (LABEL_2), not a distribution of at least 2" in out.stderr
        assert "its scores sum to 0.7, not 1 ± 0.02" in out.stderr, out.stderr
        # kind composite, remote first: the rules answer when the remote's answer is refused
        # (the rules below say math, where the remote would say technology).
        document = remote_document(server.port, LABELS, kind="composite") + \
            "  composite: {mode: remote_first}\n" \
            "  rules:\n    math: {keywords: [integral]}\n"
        out = classify(tmp_path, document)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["category"] == "math"
        assert len(server.requests) == 2
        # Served, the answer says a fallback gave it (its provenance), on /classify and in MCP.
        path = tmp_path / "composite.yaml"
        path.write_text(document)
        s = Serve("--http", "127.0.0.1:0", "--config", str(path))
        try:
            on_classify, on_mcp = classify_provenance(s.port), mcp_provenance(s.port)
            assert on_classify["kind"] == on_mcp["kind"] == "composite"
            assert on_classify["fallback"] is True and on_mcp["fallback"] is True
            assert health_provenance(s.port)["fallback"] is False
            # The caller's trace goes on to the http_classify server as headers (docs/tracing.md):
            # the same trace id and flags, a span id of mcpclass's own.
            trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
            status, _, body = request(s.port, "POST", "/mcp/tools/call",
                                      {"name": "classify_text",
                                       "arguments": {"text": "an integral, traced"}},
                                      headers={"traceparent": f"00-{trace}-{parent}-01",
                                               "tracestate": "v=1"})
            assert status == 200, body
            headers = {k.lower(): v for k, v in server.requests[-1][1].items()}
            sent = headers["traceparent"].split("-")
            assert sent[0] == "00" and sent[1] == trace and sent[3] == "01", headers
            assert len(sent[2]) == 16 and sent[2] != parent
            assert headers["tracestate"] == "v=1"
        finally:
            s.kill()
    finally:
        server.shutdown()


def test_a_huge_reply_is_quoted_in_a_bounded_excerpt(tmp_path):
    # Issue 47: a remote's reply (up to 16 MiB) went whole into the exception, `serve`'s 500 body
    # and the log. Now at most 200 bytes of it, cut on a character, and its size.
    for huge, problem in [("error", "answered status 500: overloaded: éé"),
                          ("object", 'not a list of {label, score}: {"error": "overloaded: éé')]:
        server = PipelineServer(huge=huge)
        try:
            out = classify(tmp_path, remote_document(server.port, LABELS))
            assert out.returncode != 0
            assert problem in out.stderr, out.stderr[:1000]
            assert "… (" in out.stderr and len(out.stderr.encode()) < 2048, len(out.stderr)
            # serve's /classify answers 500 with the classifier's message: bounded too.
            path = tmp_path / f"huge-{huge}.yaml"
            path.write_text(remote_document(server.port, LABELS))
            s = Serve("--http", "127.0.0.1:0", "--config", str(path))
            try:
                status, _, body = request(s.port, "POST", "/classify", {"inputs": MATH_QUERY})
                assert status == 500, body[:1000]
                assert problem in json.loads(body)["error"], body[:1000]
                assert len(body.encode()) < 2048, len(body)
            finally:
                s.kill()
        finally:
            server.shutdown()


def test_http_classify_keys_are_checked(tmp_path):
    out = classify(tmp_path, remote_document(1, "    tool: classify_text\n"))
    assert out.returncode == 2
    assert "classifier.remote.tool: does not apply to protocol http_classify" in out.stderr
    out = classify(tmp_path, "classifier:\n  kind: remote\n  remote:\n"
                             "    url: http://127.0.0.1:1/mcp\n    access_key: k\n")
    assert out.returncode == 2
    assert "classifier.remote.access_key: applies to protocol http_classify only" in out.stderr


def reference_spans(fixture="bert-token-f32"):
    with open(os.path.join(FIXTURES, "token_reference.json"), encoding="utf-8") as f:
        return json.load(f)["texts"]


def same_spans(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = dict(w)
        assert abs(g["score"] - w.pop("score")) < 1e-4
        w.pop("byte_start", None)
        w.pop("byte_end", None)
        assert set(g) == set(w) | {"score"}
        assert {k: g[k] for k in w} == w


def test_serve_answers_token_spans_in_the_pipeline_shape(tmp_path):
    model = os.path.join(FIXTURES, "bert-token-f32")
    if not os.path.isdir(model):
        pytest.skip("no token-classification fixture")
    s = serve(tmp_path, f"token_classifier:\n  model: {model}\n  aggregation: simple\n")
    try:
        texts = reference_spans()
        status, _, body = request(s.port, "POST", "/classify/spans", {"inputs": texts[0]["text"]})
        assert status == 200, body
        same_spans(json.loads(body), texts[0]["spans"]["simple"])
        status, _, body = request(s.port, "POST", "/classify/spans",
                                  {"inputs": [t["text"] for t in texts],
                                   "parameters": {"aggregation_strategy": "max"}})
        assert status == 200, body
        for got, text in zip(json.loads(body), texts):
            same_spans(got, text["spans"]["max"])
        status, _, body = request(s.port, "POST", "/classify/spans",
                                  {"inputs": "x", "parameters": {"aggregation_strategy": "best"}})
        assert status == 400 and "aggregation must be none, simple" in json.loads(body)["error"]
    finally:
        s.kill()


# --- provenance (issue 34 part 2) ---------------------------------------------------------------

PROVENANCE_KEY = "io.mcpclass/provenance"
PROVENANCE_FIELDS = {"kind", "model_id", "tokenizer_id", "taxonomy_id", "generation", "cached",
                     "fallback"}


def classify_provenance(port, text=MATH_QUERY):
    """The provenance headers of a /classify answer, as the `_meta` object spells them."""
    status, headers, body = request(port, "POST", "/classify", {"inputs": text})
    assert status == 200, body
    return {"kind": headers["x-mcpclass-classifier"], "model_id": headers["x-mcpclass-model-id"],
            "tokenizer_id": headers.get("x-mcpclass-tokenizer"),
            "taxonomy_id": headers["x-mcpclass-taxonomy"],
            "generation": int(headers["x-mcpclass-generation"]),
            "cached": {"true": True, "false": False}[headers["x-mcpclass-cached"]],
            "fallback": {"true": True, "false": False}[headers["x-mcpclass-fallback"]]}


def rest_provenance(port, text=MATH_QUERY):
    status, _, body = request(port, "POST", "/mcp/tools/call",
                              {"name": "classify_text", "arguments": {"text": text}})
    assert status == 200, body
    return json.loads(body)["_meta"][PROVENANCE_KEY]


def mcp_provenance(port, text=MATH_QUERY):
    r = subprocess.run([BIN, "call", f"http://127.0.0.1:{port}/mcp", "classify_text",
                        f"text={text}"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["_meta"][PROVENANCE_KEY]


def health_provenance(port):
    status, _, body = request(port, "GET", "/health")
    assert status == 200, body
    return json.loads(body)["provenance"]


def same_answerer(*provenances):
    """Every provenance names the same classifier and generation (the flags may differ)."""
    first = provenances[0]
    for p in provenances:
        assert set(p) == PROVENANCE_FIELDS, p
        assert {k: v for k, v in p.items() if k not in ("cached", "fallback")} == \
            {k: v for k, v in first.items() if k not in ("cached", "fallback")}, provenances
    return first


def test_every_answer_names_its_classifier_and_a_reload_changes_it(tmp_path):
    path = tmp_path / "reloading.yaml"
    path.write_text("server:\n  cache: {entries: 100, ttl: 60}\n")
    s = Serve("--http", "127.0.0.1:0", "--config", str(path))
    try:
        # /classify asks for probabilities, classify_text not: REST misses the cache, MCP hits it.
        on_classify = classify_provenance(s.port)
        on_rest, on_mcp = rest_provenance(s.port), mcp_provenance(s.port)
        before = same_answerer(on_classify, on_rest, on_mcp, health_provenance(s.port))
        assert before["kind"] == "rules" and before["generation"] == 1
        assert before["tokenizer_id"] is None  # rules have no tokenizer
        for key in ("model_id", "taxonomy_id"):
            assert before[key].startswith("fnv1a64:") and len(before[key]) == len("fnv1a64:") + 16
        assert (on_classify["cached"], on_rest["cached"], on_mcp["cached"]) == (False, False, True)
        assert classify_provenance(s.port)["cached"] is True
        assert not any(p["fallback"] for p in (on_classify, on_rest, on_mcp))

        # Two categories instead of the default five and other rules: the answer, its model and
        # taxonomy ids and the generation change together, on every path.
        path.write_text("server:\n  cache: {entries: 100, ttl: 60}\n"
                        "categories:\n  - {name: math, description: Math}\n"
                        "  - {name: general, description: Everything else}\n"
                        "classifier:\n  kind: rules\n  rules:\n    math: {keywords: [integral]}\n")
        s.proc.send_signal(signal.SIGHUP)  # the file watcher may have reloaded first
        assert s.wait_for_stderr("reloaded, generation"), s.stderr()
        status, _, body = request(s.port, "POST", "/classify", {"inputs": MATH_QUERY})
        assert [item["label"] for item in json.loads(body)] == ["math", "general"]
        after = same_answerer(classify_provenance(s.port), rest_provenance(s.port),
                              mcp_provenance(s.port), health_provenance(s.port))
        assert after["generation"] >= 2  # the watcher and SIGHUP may both have reloaded
        assert after["model_id"] != before["model_id"]
        assert after["taxonomy_id"] != before["taxonomy_id"]
    finally:
        s.kill()
