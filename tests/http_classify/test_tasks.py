"""Several LoRA adapters over one base served by one `mcpclass serve` (issue 48): `adapters:`
{intent, jailbreak, topic} over tests/transformers/fixtures/bert-f32, classify_text serving
`task: intent` and a classify_<task> tool for each other task, each answering with the
probabilities of make_lora_fixtures.py's PyTorch reference (the adapter applied unmerged); bad
`adapters` / `task` settings refused naming the key.

Run by ctest (http_classify.process) with MCPCLASS_BIN set.
"""
import json
import os
import subprocess

from test_http_classify import FIXTURES, request, serve, softmax
from test_cli import BIN  # noqa: E402 (importing test_http_classify put tests/cli on the path)

with open(os.path.join(FIXTURES, "lora_reference.json"), encoding="utf-8") as f:
    REF = json.load(f)

CONFIG = f"""classifier:
  kind: transformer
  model: {FIXTURES}/bert-f32
  adapters:
    intent: {FIXTURES}/bert-lora
    jailbreak: {FIXTURES}/bert-lora-jailbreak
    topic: {FIXTURES}/bert-lora-topic
  task: intent
"""


def tool_probabilities(port, tool, text):
    status, _, body = request(port, "POST", "/mcp/tools/call", {
        "name": tool, "arguments": {"text": text, "with_probabilities": True}})
    assert status == 200, body
    result = json.loads(body)
    assert result.get("isError") is not True, result
    return result["structuredContent"]["probabilities"]


def test_one_base_serves_each_task_as_its_adapter(tmp_path):
    s = serve(tmp_path, CONFIG)
    try:
        status, _, body = request(s.port, "POST", "/mcp/tools/list", {})
        tools = {t["name"]: t for t in json.loads(body)["tools"]}
        assert {"classify_text", "classify_jailbreak", "classify_topic"} <= set(tools)
        assert "classify_intent" not in tools  # classify_text serves it
        assert "code, math, chat" in tools["classify_jailbreak"]["description"]
        for i in (1, 3, 7, 12):
            text = REF["texts"][i]
            for tool, fixture in (("classify_text", "bert-lora"),
                                  ("classify_jailbreak", "bert-lora-jailbreak"),
                                  ("classify_topic", "bert-lora-topic")):
                got = tool_probabilities(s.port, tool, text)
                want = softmax(REF["models"][fixture]["logits"][i])
                assert max(abs(a - b) for a, b in zip(got, want)) < 1e-4, (tool, i)
        status, _, body = request(s.port, "GET", "/health")
        health = json.loads(body)
        classifier = health.get("classifier", health)
        text = json.dumps(classifier)
        assert '"task": "intent"' in text and '"other_tasks": ["jailbreak", "topic"]' in text, text
    finally:
        s.kill()


def test_bad_adapters_settings_are_refused_naming_the_key(tmp_path):
    cases = [
        (CONFIG.replace("  task: intent\n", "  task: nothing\n"),
         "classifier.task: 'nothing' is not one of adapters' tasks"),
        (CONFIG.replace("  task: intent\n", f"  adapter: {FIXTURES}/bert-lora\n"),
         "classifier.adapters: excludes adapter"),
        (CONFIG.replace("    topic:", "    'to pic':"), "a task name is 1 to 48 letters"),
        (CONFIG.replace(f"    topic: {FIXTURES}/bert-lora-topic\n",
                        f"    topic: {FIXTURES}/bert-lora-rslora\n"),
         "a tensor of the encoder the tasks share"),
    ]
    for document, words in cases:
        path = tmp_path / "bad.yaml"
        path.write_text(document)
        out = subprocess.run([BIN, "classify", "-c", str(path), "hello"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode != 0 and words in out.stderr, (words, out.stderr)
