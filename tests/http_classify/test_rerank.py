"""Cross-encoder reranking and sentence pairs over real sockets on 127.0.0.1 (issue 48).

`mcpclass serve` over tests/transformers/fixtures/bert-reranker (a 1-label cross-encoder) answers
text-embeddings-inference's POST /rerank ({query, texts} → [{index, score, text?}]), the
Jina / Cohere / vLLM shape on /rerank, /v1/rerank and /v2/rerank ({query, documents} →
{model, results: [{index, relevance_score, document?}]}) and the MCP tool `rerank`, each with the
scores of make_pair_fixtures.py's PyTorch reference; bad requests are refused naming the problem.
A second serve of `kind: remote` over it reranks through its `rerank` tool, and classifies
sentence pairs through the remote's classify_text (MCP) or /classify (http_classify).

Run by ctest (http_classify.process) with MCPCLASS_BIN set.
"""
import json
import os
import subprocess

from test_http_classify import FIXTURES, request, serve, softmax
from test_cli import BIN  # noqa: E402 (importing test_http_classify put tests/cli on the path)

with open(os.path.join(FIXTURES, "pair-reference.json"), encoding="utf-8") as f:
    REF = json.load(f)
RERANK = REF["reranker"]
QUERY = RERANK["queries"][1]
# The texts the service takes (it refuses the empty one, index 0).
PICKED = [1, 3, 5, 7, 9, 11, 13]
DOCUMENTS = [RERANK["documents"][i] for i in PICKED]


def reranker(tmp_path, extra=""):
    return serve(tmp_path, f"classifier:\n  kind: transformer\n  model: {FIXTURES}/bert-reranker\n"
                           + extra)


def want_order(key="scores"):
    """(position in DOCUMENTS, reference value) best first."""
    values = [QUERY[key][i] for i in PICKED]
    return sorted(enumerate(values), key=lambda p: -p[1])


def check_ranked(got, index_key, score_key, key="scores"):
    want = want_order(key)
    assert [g[index_key] for g in got] == [i for i, _ in want]
    assert max(abs(g[score_key] - v) for g, (_, v) in zip(got, want)) < 1e-4


def test_serve_reranks_in_the_tei_jina_cohere_and_mcp_shapes(tmp_path):
    s = reranker(tmp_path)
    try:
        status, _, body = request(s.port, "POST", "/rerank",
                                  {"query": QUERY["query"], "texts": DOCUMENTS})
        assert status == 200, body
        got = json.loads(body)
        assert all(set(g) == {"index", "score"} for g in got)
        check_ranked(got, "index", "score")
        status, _, body = request(s.port, "POST", "/rerank", {
            "query": QUERY["query"], "texts": DOCUMENTS, "raw_scores": True, "return_text": True,
            "truncate": True, "truncation_direction": "Right"})
        got = json.loads(body)
        check_ranked(got, "index", "score", key="logits")
        assert [g["text"] for g in got] == [DOCUMENTS[g["index"]] for g in got]
        for path in ("/rerank", "/v1/rerank", "/v2/rerank"):
            status, headers, body = request(s.port, "POST", path, {
                "model": "anything", "query": QUERY["query"],
                "documents": DOCUMENTS[:3] + [{"text": d} for d in DOCUMENTS[3:]],
                "top_n": 4, "return_documents": True})
            assert status == 200, (path, body)
            answer = json.loads(body)
            assert answer["model"].endswith("bert-reranker")
            want = want_order()[:4]
            assert [r["index"] for r in answer["results"]] == [i for i, _ in want]
            assert [r["document"]["text"] for r in answer["results"]] == \
                [DOCUMENTS[i] for i, _ in want]
            assert max(abs(r["relevance_score"] - v)
                       for r, (_, v) in zip(answer["results"], want)) < 1e-4
            assert headers["x-mcpclass-classifier"] == "transformer", headers
        status, _, body = request(s.port, "POST", "/mcp/tools/list", {})
        tools = {t["name"]: t for t in json.loads(body)["tools"]}
        assert set(tools["rerank"]["inputSchema"]["required"]) == {"query", "documents"}
        assert tools["rerank"]["inputSchema"]["properties"]["documents"]["maxItems"] == 128
        status, _, body = request(s.port, "POST", "/mcp/tools/call", {
            "name": "rerank", "arguments": {"query": QUERY["query"], "documents": DOCUMENTS}})
        assert status == 200, body
        result = json.loads(body)
        check_ranked(result["structuredContent"]["results"], "index", "relevance_score")
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        # A reranker has one output and no distribution: classify_text says what it is.
        status, _, body = request(s.port, "POST", "/mcp/tools/call", {
            "name": "classify_text", "arguments": {"text": "a query"}})
        result = json.loads(body)
        assert result["isError"] is True
        assert "is a reranker" in result["content"][0]["text"], result
    finally:
        s.kill()


def test_serve_refuses_bad_rerank_requests_naming_the_problem(tmp_path):
    s = reranker(tmp_path, "server:\n  max_rerank_documents: 3\n")
    try:
        q = QUERY["query"]
        cases = [
            ({"texts": ["a"]}, "/rerank", 400, "query is required"),
            ({"query": q}, "/v1/rerank", 400, "documents is required"),
            ({"query": q, "texts": "a"}, "/rerank", 400, "texts must be a list of strings"),
            ({"query": q, "texts": [{"text": "a"}]}, "/rerank", 400, "texts[0] must be a string"),
            ({"query": q, "documents": ["a", 3]}, "/v1/rerank", 400, "documents[1] must be a string"),
            ({"query": q, "documents": ["a"], "top_n": 0}, "/v2/rerank", 400,
             "top_n must be a positive integer"),
            ({"query": q, "documents": ["a"], "rank_fields": []}, "/v1/rerank", 400,
             "unknown key 'rank_fields'"),
            ({"query": q, "texts": ["a"], "top_n": 1}, "/rerank", 400, "unknown key 'top_n'"),
            ({"query": q, "texts": ["a", " "]}, "/rerank", 400, "documents[1]: text must not be empty"),
            ({"query": "", "documents": ["a"]}, "/v1/rerank", 400, "query: text must not be empty"),
            ({"query": q, "documents": []}, "/v1/rerank", 400, "documents must not be empty"),
            ({"query": q, "documents": ["a", "b", "c", "d"]}, "/v1/rerank", 413,
             "documents has 4 passages; the limit is 3"),
            ("[1]", "/rerank", 400, "the body must be a JSON object"),
        ]
        for body, path, status, words in cases:
            got, _, text = request(s.port, "POST", path, body)
            assert got == status, (body, got, text)
            assert words in json.loads(text)["error"], (body, text)
        got, _, text = request(s.port, "POST", "/rerank", "{}", {"Content-Type": "text/plain"})
        assert got == 415
        got, headers, _ = request(s.port, "GET", "/v1/rerank")
        assert got == 405 and headers["allow"] == "POST"
        status, _, body = request(s.port, "POST", "/mcp/tools/call", {
            "name": "rerank", "arguments": {"query": q, "documents": ["a", ""]}})
        result = json.loads(body)
        assert result["isError"] is True
        assert "documents[1]: text must not be empty" in result["content"][0]["text"]
    finally:
        s.kill()


def test_a_classifier_that_does_not_rerank_has_no_rerank(tmp_path):
    s = serve(tmp_path)
    try:
        status, _, body = request(s.port, "POST", "/rerank", {"query": "a", "texts": ["b"]})
        assert status == 404
        assert "(rules) does not rerank" in json.loads(body)["error"]
        status, _, body = request(s.port, "POST", "/mcp/tools/list", {})
        assert "rerank" not in {t["name"] for t in json.loads(body)["tools"]}
    finally:
        s.kill()


def remote_of(port, protocol=""):
    if protocol:
        return (f"classifier:\n  kind: remote\n  remote:\n    protocol: {protocol}\n"
                f"    url: http://127.0.0.1:{port}\n    max_retries: 0\n"
                "categories:\n" + "".join(f"  - name: {l}\n    description: {l}\n"
                                          for l in REF["labels"]))
    return f"classifier:\n  kind: remote\n  remote: {{url: \"http://127.0.0.1:{port}/mcp\"}}\n"


def test_a_remote_reranks_through_the_servers_rerank_tool(tmp_path):
    a = reranker(tmp_path)
    b = None
    try:
        b = serve(tmp_path, remote_of(a.port))
        status, _, body = request(b.port, "POST", "/v1/rerank",
                                  {"query": QUERY["query"], "documents": DOCUMENTS})
        assert status == 200, body
        check_ranked(json.loads(body)["results"], "index", "relevance_score")
    finally:
        a.kill()
        if b:
            b.kill()


def test_sentence_pairs_through_a_remote_classifier(tmp_path):
    """B (kind remote) forwards {text, text_pair} to A (bert-f32): over MCP as classify_text's
    text_pair, which A's tool declares; over http_classify as the pipeline's pair input."""
    a = serve(tmp_path, f"classifier:\n  kind: transformer\n  model: {FIXTURES}/bert-f32\n")
    others = []
    try:
        pair = REF["pairs"][3]
        want = dict(zip(REF["labels"], softmax(REF["models"]["bert"]["logits"][3])))
        for protocol in ("", "http_classify"):
            b = serve(tmp_path, remote_of(a.port, protocol))
            others.append(b)
            status, _, body = request(b.port, "POST", "/classify",
                                      {"inputs": {"text": pair[0], "text_pair": pair[1]}})
            assert status == 200, (protocol, body)
            got = {item["label"]: item["score"] for item in json.loads(body)}
            assert max(abs(got[k] - want[k]) for k in want) < 1e-4, protocol
        # A remote whose server classifies one text refuses a pair rather than drop its second
        # text.
        rules = serve(tmp_path)
        others.append(rules)
        b = serve(tmp_path, remote_of(rules.port))
        others.append(b)
        status, _, body = request(b.port, "POST", "/classify",
                                  {"inputs": {"text": "a", "text_pair": "b"}})
        assert status == 400, body
        assert "(remote) classifies one text" in json.loads(body)["error"]
    finally:
        a.kill()
        for o in others:
            o.kill()


def test_the_rerank_command_prints_the_tools_answer():
    out = subprocess.run([BIN, "rerank", "--model", f"{FIXTURES}/bert-reranker", "--top-n", "2",
                          "--documents", QUERY["query"], *DOCUMENTS],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    want = want_order()[:2]
    assert [r["index"] for r in results] == [i for i, _ in want]
    assert [r["document"]["text"] for r in results] == [DOCUMENTS[i] for i, _ in want]
    out = subprocess.run([BIN, "rerank", "--model", f"{FIXTURES}/bert-reranker", "q", ""],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "documents[0]: text must not be empty" in out.stderr
    out = subprocess.run([BIN, "rerank", "q", "a"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "the rules classifier does not rerank" in out.stderr, out.stderr
