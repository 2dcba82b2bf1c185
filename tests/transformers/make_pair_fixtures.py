#!/usr/bin/env python3
"""Writes pair-reference.json: sentence-pair logits of committed fixtures (issue 48).

NLI, fact-check and cross-encoder models are sequence classifiers fed a pair of texts through
the tokenizer's pair template: [CLS] text [SEP] text_pair [SEP], the second text and its [SEP]
of token type 1 (tokenizer.json's TemplateProcessing "pair", BertProcessing). For the pairs
(TEXTS[i], TEXTS[(5i + 2) mod n]) of make_fixtures.py's texts this script encodes each pair
with make_fixtures.py's WordPiece, truncates it to max_position_embeddings as tokenizers'
truncate_encodings does (longest first; every text alone is under 64 tokens, so tokenizers' first
cut of each text to max_length, whole words at a time, changes none of them), and runs the reference models of these fixtures,
rebuilt from their seeds (the committed checkpoints hold the same weights):

  bert        bert-f32 (make_fixtures.py): token types 0 and 1 through its two type embeddings
  deberta-v3  deberta-v3-f32 (make_deberta_fixtures.py): no token-type embeddings, types unread
  deberta-v2  deberta-v2-f32: two token types, added to the word embeddings

One padded batch of all pairs, checked against the pairs one by one.

And a cross-encoder reranker, bert-reranker/: bert-f32's encoder under a 1-label head, its
config.json as sentence-transformers' CrossEncoder publishes one (id2label {"0": "LABEL_0"}, no
problem_type, sentence_transformers.activation_fn Sigmoid), scored for two queries against every
text: the logits and CrossEncoder.predict's scores, sigmoid(logit).

usage: /usr/bin/python3 tests/transformers/make_pair_fixtures.py [--out DIR]
The output is the same on every run (ctest transformers.fixtures_reproduce).
"""
import json

import torch

import make_deberta_fixtures as deberta
import make_fixtures as base

MAX_TOKENS = 64


def longest_first(n1, n2, max_length):
    """tokenizers' truncate_encodings, LongestFirst: the lengths a pair keeps."""
    if n1 + n2 <= max_length:
        return n1, n2
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    n2 = n1 if n1 > max_length else max(n1, max_length - n1)
    if n1 + n2 > max_length:
        n1 = max_length // 2
        n2 = n1 + max_length % 2
    return (n2, n1) if swap else (n1, n2)


def pieces(text, vocab):
    out = []
    for w in base.basic_tokens(text):
        out += base.wordpiece(w, vocab, "[UNK]")
    return out


def encode_pair(a, b, vocab):
    """ids and token types of [CLS] a [SEP] b [SEP] within MAX_TOKENS."""
    pa, pb = pieces(a, vocab), pieces(b, vocab)
    n1, n2 = longest_first(len(pa), len(pb), MAX_TOKENS - 3)
    pa, pb = pa[:n1], pb[:n2]
    ids = [vocab["[CLS]"]] + pa + [vocab["[SEP]"]] + pb + [vocab["[SEP]"]]
    return ids, [0] * (len(pa) + 2) + [1] * (len(pb) + 1)


def run(model, encoded, pad_id):
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.tensor([i + [pad_id] * (width - len(i)) for i, _ in encoded])
    types = torch.tensor([t + [0] * (width - len(t)) for _, t in encoded])
    mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in encoded])
    with torch.no_grad():
        return model(ids, mask, types)


class Reranker(base.SequenceClassifier):
    """bert-f32's classifier with the 1-output head of a cross-encoder."""

    def __init__(self, vocab_size, pad_id):
        super().__init__(vocab_size, False, pad_id)
        self.head = torch.nn.Linear(base.HIDDEN, 1)


def write_reranker(vocab, pad_id):
    """bert-reranker/ and its reference: RERANK_QUERIES against every text."""
    model = Reranker(len(vocab), pad_id).eval()
    base.randomise(model, 37)
    with torch.no_grad():
        model.head.bias.add_(4.5)  # scores on both sides of 0.5
    base.write_fixture("bert-reranker", vocab, base.SPECIALS_BERT, False, model, "F32")
    c = base.config(vocab, False, pad_id)
    del c["problem_type"]
    c["id2label"], c["label2id"] = {"0": "LABEL_0"}, {"LABEL_0": 0}
    c["sentence_transformers"] = {"activation_fn": "torch.nn.modules.activation.Sigmoid",
                                  "version": "4.1.0"}
    (base.OUT / "bert-reranker" / "config.json").write_text(json.dumps(c, indent=2) + "\n")
    out = {"queries": [], "documents": base.TEXTS}
    for q in RERANK_QUERIES:
        encoded = [encode_pair(q, d, vocab) for d in base.TEXTS]
        logits = run(model, encoded, pad_id)[:, 0]
        single = torch.cat([run(model, [e], pad_id)[:, 0] for e in encoded])
        assert (logits - single).abs().max() < 5e-5, "reranker: batch differs from one by one"
        out["queries"].append({"query": q, "logits": logits.tolist(),
                               "scores": torch.sigmoid(logits).tolist()})
        print(f"reranker, query {q!r}: logits {logits.min():.2f} .. {logits.max():.2f}")
    return out


RERANK_QUERIES = ["write a python function to sort a list",
                  "How do I fix this SQL query error: table not found"]


def main():
    out = base.output_dir()
    base.OUT = out
    vocab = base.vocabulary(base.SPECIALS_BERT)
    pad_id = vocab["[PAD]"]
    n = len(base.TEXTS)
    pairs = [[base.TEXTS[i], base.TEXTS[(5 * i + 2) % n]] for i in range(n)]
    encoded = [encode_pair(a, b, vocab) for a, b in pairs]
    bert = base.SequenceClassifier(len(vocab), False, pad_id).eval()
    base.randomise(bert, 31)
    models = {"bert": bert}
    for name in ("deberta-v3", "deberta-v2"):
        spec = deberta.MODELS[name]
        m = deberta.Model(len(vocab), spec, base.LABELS).eval()
        deberta.randomise(m, spec["seed"])
        models[name] = m
    reference = {"texts": base.TEXTS, "labels": base.LABELS, "pairs": pairs, "models": {}}
    for name, model in models.items():
        batch = run(model, encoded, pad_id)
        single = torch.cat([run(model, [e], pad_id) for e in encoded])
        assert (batch - single).abs().max() < 5e-5, f"{name}: batch differs from one by one"
        reference["models"][name] = {
            "max_tokens": MAX_TOKENS, "ids": [i for i, _ in encoded],
            "type_ids": [t for _, t in encoded], "logits": batch.tolist()}
        print(f"{name}: {len(pairs)} pairs, longest {max(len(i) for i, _ in encoded)} tokens, "
              f"|logit| max {batch.abs().max():.2f}")
    reference["reranker"] = write_reranker(vocab, pad_id)
    (out / "pair-reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
