"""Cross-encoder reranking through the Python binding (rerank, rerank_json): the scores of the
bert-reranker fixture against the PyTorch reference of tests/transformers/make_pair_fixtures.py,
top_n and return_documents, a bad request, and a classifier that does not rerank."""

import json
import os

import pytest

import mcpclass

ROOT = os.environ.get("MCPCLASS_TEST_SOURCE_DIR", "")
FIXTURES = os.path.join(ROOT, "tests", "transformers", "fixtures")
RULES = """
categories:
  - {name: math, description: Math}
  - {name: other, description: Other}
classifier: {kind: rules, fallback: other, rules: {math: {keywords: [algebra]}}}
"""


def test_rerank_matches_the_reference():
    if os.environ.get("MCPCLASS_TEST_TORCH") != "1":
        pytest.skip("the learned component is not built (MCPCLASS_TEST_TORCH)")
    with open(os.path.join(FIXTURES, "pair-reference.json"), encoding="utf-8") as f:
        ref = json.load(f)["reranker"]
    query = ref["queries"][0]
    picked = [2, 4, 6, 8, 10]
    documents = [ref["documents"][i] for i in picked]
    want = sorted(((n, query["scores"][i]) for n, i in enumerate(picked)), key=lambda p: -p[1])
    config = f"classifier:\n  kind: transformer\n  model: {os.path.join(FIXTURES, 'bert-reranker')}\n"
    with mcpclass.Classifier(config) as c:
        ranked = c.rerank(query["query"], documents, top_n=3, return_documents=True)
        assert [r.index for r in ranked] == [n for n, _ in want[:3]]
        assert max(abs(r.relevance_score - s) for r, (_, s) in zip(ranked, want)) < 1e-4
        assert [r.document for r in ranked] == [documents[r.index] for r in ranked]
        assert all(r.document is None for r in c.rerank(query["query"], documents))
        with pytest.raises(mcpclass.InvalidTextError, match=r"documents\[1\]: text must not be empty"):
            c.rerank(query["query"], ["a", ""])
        with pytest.raises(mcpclass.InvalidTextError, match="unknown key 'texts'"):
            c.rerank_json(json.dumps({"query": "a", "documents": ["b"], "texts": []}))


def test_a_classifier_that_does_not_rerank_refuses():
    with mcpclass.Classifier(RULES) as c:
        with pytest.raises(mcpclass.InvalidArgumentError, match=r"\(rules\) does not rerank"):
            c.rerank("algebra", ["x"])
