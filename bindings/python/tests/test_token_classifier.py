"""The token classifier (PII spans) through the Python binding, against the reference spans of
tests/transformers/make_token_fixtures.py, and the detect_pii tool of a Server built from the same
configuration, called over HTTP."""

import json
import os
import urllib.request

import pytest

import mcpclass

ROOT = os.environ.get("MCPCLASS_TEST_SOURCE_DIR", "")
FIXTURES = os.path.join(ROOT, "tests", "transformers", "fixtures")
CONFIG = f"""
token_classifier:
  model: {os.path.join(FIXTURES, "bert-token-f32")}
  aggregation: average
"""


@pytest.fixture
def learned():
    flag = os.environ.get("MCPCLASS_TEST_TORCH")
    if flag is None:
        pytest.skip("MCPCLASS_TEST_TORCH is not set (ctest sets it to the build's "
                    "MCPCLASS_WITH_LEARNED)")
    if flag != "1":
        with pytest.raises(mcpclass.ConfigError, match="MCPCLASS_WITH_LEARNED=OFF"):
            mcpclass.TokenClassifier(CONFIG)
        pytest.skip("the learned component is not built")


def reference():
    with open(os.path.join(FIXTURES, "token_reference.json"), encoding="utf-8") as f:
        return json.load(f)["texts"]


def test_spans_match_the_reference(learned):
    compared = 0
    with mcpclass.TokenClassifier(CONFIG) as tc:
        for item in reference():
            text = item["text"]
            for strategy in (None, "none", "first"):
                want = item["spans"][strategy or "average"]
                got = tc.detect(text, strategy)
                assert len(got) == len(want), (text, strategy)
                for g, w in zip(got, want):
                    assert g["score"] == pytest.approx(w.pop("score"), abs=1e-4)
                    assert {k: g[k] for k in w} == w
                    # start/end are Python string indices; byte_start/byte_end UTF-8 bytes.
                    encoded = text.encode("utf-8")
                    assert encoded[g["byte_start"]:g["byte_end"]].decode() == \
                        text[g["start"]:g["end"]]
                    compared += 1
        with pytest.raises(mcpclass.InvalidTextError):
            tc.detect("")
        with pytest.raises(mcpclass.InvalidArgumentError):
            tc.detect("hi", "mean")
    assert compared > 150


def test_server_tool_over_http(learned):
    text = reference()[2]["text"]
    with mcpclass.TokenClassifier(CONFIG) as tc:
        direct = json.loads(tc.detect_json(text))
    with mcpclass.Server(CONFIG) as server:
        port = server.start_http("127.0.0.1", 0)

        def post(body, session=None):
            headers = {"Content-Type": "application/json",
                       "Accept": "application/json, text/event-stream"}
            if session:
                headers["Mcp-Session-Id"] = session
            request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp",
                                             data=json.dumps(body).encode(), headers=headers)
            with urllib.request.urlopen(request, timeout=30) as resp:
                raw = resp.read().decode()
                session = resp.headers.get("Mcp-Session-Id", session)
            if raw.startswith("event:") or raw.startswith("id:") or "\ndata:" in raw:
                raw = next(line[5:] for line in raw.splitlines()
                           if line.startswith("data:") and line[5:].strip())
            return (json.loads(raw) if raw.strip() else None), session

        _, session = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        tools, _ = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        tool = next(t for t in tools["result"]["tools"] if t["name"] == "detect_pii")
        assert tool["outputSchema"]["required"] == ["spans", "aggregation"]
        answer, _ = post({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                          "params": {"name": "detect_pii", "arguments": {"text": text}}},
                         session)
        assert answer["result"]["structuredContent"] == direct
        assert direct["aggregation"] == "average" and direct["spans"]
