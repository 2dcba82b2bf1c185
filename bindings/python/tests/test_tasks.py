"""One base shared by several LoRA adapters through the Python binding (Classifier.tasks,
Classifier.task): each task's probabilities against the PyTorch reference of
tests/transformers/make_lora_fixtures.py (the adapter applied unmerged), an unknown task, and a
classifier without tasks."""

import json
import os

import pytest

import mcpclass
from test_pairs import FIXTURES, RULES, softmax  # the same fixtures, rules and softmax


def test_each_task_answers_as_its_adapter():
    if os.environ.get("MCPCLASS_TEST_TORCH") != "1":
        pytest.skip("the learned component is not built (MCPCLASS_TEST_TORCH)")
    with open(os.path.join(FIXTURES, "lora_reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    config = f"""classifier:
  kind: transformer
  model: {FIXTURES}/bert-f32
  adapters:
    intent: {FIXTURES}/bert-lora
    jailbreak: {FIXTURES}/bert-lora-jailbreak
    topic: {FIXTURES}/bert-lora-topic
"""
    with mcpclass.Classifier(config) as base:
        base_tasks = base.tasks
        assert base_tasks == ["intent", "jailbreak", "topic"]
        tasks = {name: base.task(name) for name in base_tasks}
    # Each task keeps the base alive after its handle is closed.
    for name, fixture in (("intent", "bert-lora"), ("jailbreak", "bert-lora-jailbreak"),
                          ("topic", "bert-lora-topic")):
        with tasks[name] as c:
            # Its own task first; classify()'s task (the first) is the base itself.
            assert c.tasks == (base_tasks if name == "intent" else [name])
            for i in (3, 4, 11):
                got = c.classify(ref["texts"][i], probabilities=True).probabilities
                want = softmax(ref["models"][fixture]["logits"][i])
                assert max(abs(a - b) for a, b in zip(got, want)) < 1e-4, (name, i)
            with pytest.raises(mcpclass.NotFoundError, match="tasks are " + name):
                c.task("nothing")


def test_a_classifier_without_tasks_has_none():
    with mcpclass.Classifier(RULES) as c:
        assert c.tasks == []
        with pytest.raises(mcpclass.NotFoundError, match="has no tasks"):
            c.task("intent")
