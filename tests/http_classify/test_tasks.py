"""Several LoRA adapters over one base served by one `mcpclass serve` (issue 48): `adapters:`
{intent, jailbreak, topic} over tests/transformers/fixtures/bert-f32, classify_text serving
`task: intent` and a classify_<task> tool (and POST /classify/<task>) for each other task, each
answering with the probabilities of make_lora_fixtures.py's PyTorch reference (the adapter
applied unmerged); bad `adapters` / `task` settings refused naming the key.

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


def test_merge_adapters_gives_each_task_its_merged_copy(tmp_path):
    """merge_adapters: true — each task a merged copy of the base: the same answers."""
    s = serve(tmp_path, CONFIG + "  merge_adapters: true\n")
    try:
        for i in (1, 7):
            text = REF["texts"][i]
            for tool, fixture in (("classify_text", "bert-lora"),
                                  ("classify_topic", "bert-lora-topic")):
                got = tool_probabilities(s.port, tool, text)
                want = softmax(REF["models"][fixture]["logits"][i])
                assert max(abs(a - b) for a, b in zip(got, want)) < 1e-4, (tool, i)
        status, _, body = request(s.port, "GET", "/health")
        assert '"merge_adapters":true' in body.replace(" ", ""), body
    finally:
        s.kill()


def label_scores(port, path, inputs):
    status, _, body = request(port, "POST", path, {"inputs": inputs})
    assert status == 200, (path, status, body)
    return json.loads(body)


def test_classify_path_of_each_task_answers_as_its_adapter(tmp_path):
    """POST /classify/<task> answers with that task's adapter ([{label, score}] as /classify);
    /classify/<classify_text's task> is /classify; an unknown task is 404 naming the tasks."""
    s = serve(tmp_path, CONFIG)
    try:
        texts = [REF["texts"][i] for i in (2, 5, 9)]
        for path, fixture in (("/classify/jailbreak", "bert-lora-jailbreak"),
                              ("/classify/topic", "bert-lora-topic"),
                              ("/classify/intent", "bert-lora"),
                              ("/classify", "bert-lora")):
            answers = label_scores(s.port, path, texts)
            for i, answer in zip((2, 5, 9), answers):
                got = {a["label"]: a["score"] for a in answer}
                want = softmax(REF["models"][fixture]["logits"][i])
                assert max(abs(got[l] - w) for l, w in zip(REF["labels"], want)) < 1e-4, (path, i)
        status, _, body = request(s.port, "POST", "/classify/nothing", {"inputs": "hello"})
        assert status == 404, body
        assert "no task 'nothing'" in body and "intent, jailbreak, topic" in body, body
        status, _, body = request(s.port, "POST", "/classify/", {"inputs": "hello"})
        assert status == 404, body
    finally:
        s.kill()


def test_classify_task_path_of_a_classifier_without_tasks_is_404(tmp_path):
    s = serve(tmp_path)  # the embedded rules
    try:
        status, _, body = request(s.port, "POST", "/classify/intent", {"inputs": "hello"})
        assert status == 404 and "has no tasks" in body, body
        status, _, body = request(s.port, "POST", "/classify", {"inputs": "what is 2+2"})
        assert status == 200, body
    finally:
        s.kill()


def test_bad_adapters_settings_are_refused_naming_the_key(tmp_path):
    cases = [
        (CONFIG.replace("  task: intent\n", "  task: nothing\n"),
         "classifier.task: 'nothing' is not one of adapters' tasks"),
        (CONFIG.replace("  task: intent\n", f"  adapter: {FIXTURES}/bert-lora\n"),
         "classifier.adapters: excludes adapter"),
        (CONFIG.replace("    topic:", "    'to pic':"), "a task name is 1 to 48 letters"),
        # classify_text is the served task's tool and /classify/spans the token classifier's.
        (CONFIG.replace("    topic:", "    text:"), "classifier.adapters.text: 'text' is reserved"),
        (CONFIG.replace("    topic:", "    spans:"), "'spans' is reserved"),
        (f"classifier:\n  kind: transformer\n  model: {FIXTURES}/bert-f32\n"
         "  merge_adapters: true\n", "classifier.merge_adapters: applies to adapters"),
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


def test_model_inspect_describes_several_adapters_over_one_base():
    """`model inspect DIR --task NAME=DIR ...`: each task's labels and LoRA updates, and the
    parameters one shared base holds against one merged copy of the base per task."""
    base = json.loads(subprocess.run([BIN, "model", "inspect", f"{FIXTURES}/bert-f32"],
                                     capture_output=True, text=True, timeout=60,
                                     check=True).stdout)
    out = subprocess.run([BIN, "model", "inspect", f"{FIXTURES}/bert-f32",
                          "--task", f"intent={FIXTURES}/bert-lora",
                          "--task", f"jailbreak={FIXTURES}/bert-lora-jailbreak",
                          "--task", f"topic={FIXTURES}/bert-lora-topic"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["architecture"] == base["architecture"]
    assert [t["task"] for t in got["tasks"]] == ["intent", "jailbreak", "topic"]
    assert all(t["labels"] == REF["labels"] and t["lora_parameters"] > 0 for t in got["tasks"])
    memory = got["memory"]
    # Each merged copy holds what the base does; the shared base holds its encoder once.
    assert memory["merged_copies_parameters"] == 3 * base["parameters"], (memory, base)
    assert memory["parameters_held"] == memory["shared_parameters"] + sum(
        t["parameters"] for t in got["tasks"])
    assert memory["parameters_held"] < memory["merged_copies_parameters"] / 2
    for bad, words in (([f"to pic={FIXTURES}/bert-lora"], "a task name is 1 to 48"),
                       (["intent"], "expected NAME=DIR"),
                       ([f"a={FIXTURES}/bert-lora", f"a={FIXTURES}/bert-lora"], "given twice")):
        args = [BIN, "model", "inspect", f"{FIXTURES}/bert-f32"]
        for b in bad:
            args += ["--task", b]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and words in out.stderr, (bad, out.stderr)
