"""Token classification through the command line: `mcpclass detect` prints the spans the
reference pipeline port (tests/transformers/make_token_fixtures.py) computed for every
architecture (BERT, RoBERTa, ModernBERT, mmBERT), `serve --stdio` answers the detect_pii tool with
the same JSON, and `model inspect` describes the checkpoint."""
import json
import os
import subprocess
import sys

import pytest

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "mcpclass")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "transformers", "fixtures")
MODEL = os.path.join(FIXTURES, "bert-token-f32")


# Each token-classification fixture and its reference.
ARCHITECTURES = {
    "bert-token-f32": "token_reference.json",
    "roberta-token-f32": "roberta-token-reference.json",
    "modernbert-token-f32": "modernbert-token-reference.json",
    "mmbert-token-f32": "mmbert-token-reference.json",
}


def reference(fixture="bert-token-f32"):
    with open(os.path.join(FIXTURES, ARCHITECTURES[fixture]), encoding="utf-8") as f:
        return json.load(f)["texts"]


def detect(*args):
    return subprocess.run([BIN, "detect", *args], capture_output=True, timeout=60)


def same_spans(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = dict(w)
        assert abs(g["score"] - w.pop("score")) < 1e-4
        assert {k: g[k] for k in w} == w


@pytest.mark.parametrize("fixture", ARCHITECTURES)
def test_detect_prints_the_pipelines_spans(fixture):
    texts = reference(fixture)
    for strategy in ("simple", "max"):
        out = detect("--model", os.path.join(FIXTURES, fixture), "--aggregation", strategy,
                     *[t["text"] for t in texts])
        assert out.returncode == 0, out.stderr
        lines = out.stdout.decode().splitlines()
        assert len(lines) == len(texts)
        for line, item in zip(lines, texts):
            answer = json.loads(line)
            assert answer["aggregation"] == strategy
            same_spans(answer["spans"], item["spans"][strategy])


def test_detect_refuses_what_it_cannot_answer():
    out = detect("hello")  # the default configuration has no token_classifier
    assert out.returncode == 2
    assert b"token_classifier" in out.stderr
    out = detect("--model", MODEL, "--aggregation", "mean", "hello")
    assert out.returncode == 2 and b"aggregation must be" in out.stderr
    out = detect("--model", os.path.join(FIXTURES, "bert-f32"), "hello")  # fails to load
    assert out.returncode == 1 and b"is a sequence classifier" in out.stderr


FAKE_SERVER = os.path.join(os.path.dirname(__file__), "..", "client", "fake_classifier_server.py")


def remote_config(tmp_path, mode="ok", tool=None):
    """A configuration whose token_classifier is the fake stdio server's detect_pii tool."""
    config = tmp_path / f"remote-{mode}-{tool}.yaml"
    named = f", tool: {tool}" if tool else ""
    config.write_text(
        f'token_classifier:\n  remote: {{command: ["{sys.executable}", "{FAKE_SERVER}"], '
        f"env: {{FAKE_MODE: {mode}}}, max_retries: 0{named}}}\n")
    return str(config)


def test_detect_through_a_remote_span_tool(tmp_path):
    # The server counts code points as the pipeline does and gives no byte offsets: they are
    # derived from the text ("ë" is two bytes).
    out = detect("--config", remote_config(tmp_path), "Ask Zoë and Zoë's brother")
    assert out.returncode == 0, out.stderr
    spans = json.loads(out.stdout)["spans"]
    assert [(s["entity_group"], s["start"], s["end"], s["byte_start"], s["byte_end"])
            for s in spans] == [("PERSON", 4, 7, 4, 8), ("PERSON", 12, 15, 13, 17)]


def test_detect_refuses_a_remote_span_tool_that_lies_or_is_missing(tmp_path):
    out = detect("--config", remote_config(tmp_path, "badspans"), "Zoë here")
    assert out.returncode == 1
    assert b"start 2 and end 13 do not lie in order within the text's 8 characters" in out.stderr
    out = detect("--config", remote_config(tmp_path, tool="find_names"), "Zoë")
    assert out.returncode == 1 and b"has no tool 'find_names'" in out.stderr
    config = tmp_path / "both.yaml"
    config.write_text(f"token_classifier: {{remote: {{command: [x]}}, model: {MODEL}}}\n")
    out = detect("--config", str(config), "Zoë")
    assert out.returncode == 2
    assert b"token_classifier.model: does not apply to a remote token classifier" in out.stderr


@pytest.mark.parametrize("fixture", ["bert-token-f32", "modernbert-token-f32"])
def test_serve_stdio_answers_detect_pii(tmp_path, fixture):
    config = tmp_path / "config.yaml"
    config.write_text(f"token_classifier:\n  model: {os.path.join(FIXTURES, fixture)}\n"
                      "  aggregation: first\n  tool: find_pii\n")
    text = reference(fixture)[0]["text"]
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "find_pii", "arguments": {"text": text}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "find_pii", "arguments": {"text": text, "aggregation": "none"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "find_pii", "arguments": {"text": ""}}},
    ]
    out = subprocess.run([BIN, "serve", "--stdio", "-c", str(config)],
                         input="".join(json.dumps(r) + "\n" for r in requests).encode(),
                         capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    replies = {r["id"]: r for r in map(json.loads, out.stdout.decode().splitlines())}
    tool = next(t for t in replies[2]["result"]["tools"] if t["name"] == "find_pii")
    assert tool["inputSchema"]["required"] == ["text"]
    assert "spans" in tool["outputSchema"]["properties"]
    first = replies[3]["result"]["structuredContent"]
    cli = json.loads(detect("-c", str(config), text).stdout)
    assert first == cli  # one function answers both
    same_spans(first["spans"], reference(fixture)[0]["spans"]["first"])
    same_spans(replies[4]["result"]["structuredContent"]["spans"],
               reference(fixture)[0]["spans"]["none"])
    assert replies[5]["result"]["isError"] is True


@pytest.mark.parametrize("fixture", ["bert-token-f32", "mmbert-token-f32"])
def test_model_inspect_describes_a_token_classifier(fixture):
    out = subprocess.run([BIN, "model", "inspect", os.path.join(FIXTURES, fixture)],
                         capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    modernbert = fixture.startswith("mmbert")
    assert info["architecture"] == ("ModernBertForTokenClassification" if modernbert
                                    else "BertForTokenClassification")
    assert info["labels"][:3] == ["O", "B-EMAIL_ADDRESS", "I-EMAIL_ADDRESS"]
    assert "every token's final hidden state" in info["compute"]
    assert "logits a token" in info["compute"] and "classifier_pooling" not in info
    if modernbert:  # the prediction head before the classifier; YaRN
        assert "head.dense" in info["compute"] and info["global_rope"]["type"] == "yarn"
