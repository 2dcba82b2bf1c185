"""Sentence pairs through the Python binding (classify_pair_json): the probabilities of the BERT
fixture's pairs against the PyTorch reference of tests/transformers/make_pair_fixtures.py, and a
rules classifier refusing a pair."""

import json
import math
import os

import pytest

import mcpclass

ROOT = os.environ.get("MCPCLASS_TEST_SOURCE_DIR", "")
FIXTURES = os.path.join(ROOT, "tests", "transformers", "fixtures")
CONFIG = f"""
classifier:
  kind: transformer
  model: {os.path.join(FIXTURES, "bert-f32")}
"""
RULES = """
categories:
  - {name: math, description: Math}
  - {name: other, description: Other}
classifier: {kind: rules, fallback: other, rules: {math: {keywords: [algebra]}}}
"""


def softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    return [v / sum(e) for v in e]


def test_pair_probabilities_match_the_reference():
    flag = os.environ.get("MCPCLASS_TEST_TORCH")
    if flag != "1":
        pytest.skip("the learned component is not built (MCPCLASS_TEST_TORCH)")
    with open(os.path.join(FIXTURES, "pair-reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    logits = ref["models"]["bert"]["logits"]
    with mcpclass.Classifier(CONFIG) as c:
        for i in (1, 3, 7, 12):  # pair 0 starts with the empty text, which the tool refuses
            text, text_pair = ref["pairs"][i]
            got = json.loads(c.classify_pair_json(text, text_pair, probabilities=True))
            want = softmax(logits[i])
            assert max(abs(a - b) for a, b in zip(got["probabilities"], want)) < 1e-4, i
        # The whole tool result, as classify_text with text_pair returns it.
        tool = json.loads(c.classify_pair_json(*ref["pairs"][3], tool_result=True))
        assert tool["isError"] is False and "class" in tool["structuredContent"]


def test_a_classifier_of_one_text_refuses_a_pair():
    with mcpclass.Classifier(RULES) as c:
        with pytest.raises(mcpclass.InvalidArgumentError, match=r"\(rules\) classifies one text"):
            c.classify_pair_json("algebra", "x")
