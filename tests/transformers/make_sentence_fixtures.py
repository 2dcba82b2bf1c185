#!/usr/bin/env python3
"""Writes the sentence-transformers fixture of tests/transformers/fixtures and its reference.

  minilm-sentence   a model directory exactly as sentence-transformers saves one and the Hub
                    publishes sentence-transformers/all-MiniLM-L12-v2: modules.json
                    (models.Transformer at path "", models.Pooling at 1_Pooling,
                    models.Normalize at 2_Normalize), 1_Pooling/config.json (mean pooling),
                    sentence_bert_config.json (max_seq_length 48, shorter than the 64 positions,
                    so the long texts are truncated; do_lower_case false), and the Transformer's
                    BertModel: config.json (architectures ["BertModel"]), model.safetensors
                    with BertModel's tensor names (no "bert." prefix, pooler.dense included,
                    which Pooling ignores), tokenizer.json, tokenizer_config.json.

The encoder is make_fixtures.py's BERT (its vocabulary, tokenizer, layers and weight
generator, a new seed), hidden 64, 2 layers. sentence_reference.json holds, for the texts of
make_fixtures.py, the token ids and the sentence embedding of every Pooling configuration the
tests try on the same weights (they rewrite 1_Pooling/config.json and modules.json):

  mean_normalize   the fixture as committed (mean, then Normalize)
  mean             mean, no Normalize module
  cls              the first token, no Normalize
  max              the masked maximum, no Normalize
  mean_sqrt_len    the sum over sqrt(tokens), no Normalize
  all              every mode at once (cls, max, mean, mean_sqrt_len, weightedmean, lasttoken
                   concatenated in that order), then Normalize

  mmbert-sentence  the same layout over a ModernBERT/mmBERT base model, as
                   llm-semantic-router/mmbert-embed-32k-2d-matryoshka publishes one: config.json
                   of architectures ["ModernBertModel"] (no labels, no head), model.safetensors
                   with ModernBertModel's names (no "model." prefix), mean pooling, Normalize;
                   make_modernbert_fixtures.py's mmBERT (3 layers, YaRN, biases, a local window
                   of ±8, so the longer texts exceed it), a new seed. Its reference is
                   mmbert-sentence-reference.json.

Both references also hold "matryoshka": 2D Matryoshka embeddings (sentence-transformers'
Matryoshka2dLoss trains them): the hidden state after the first `layers` layers
(output_hidden_states' hidden_states[layers]: for ModernBERT the residual stream, no final_norm,
unless it is the last layer), pooled, its first `dimensions` values kept, then L2-normalized.

The pooling is written from sentence_transformers/models/Pooling.py and Normalize.py (the
package is not installed here) and runs on one right-padded batch with its attention mask;
the script checks that batch against the texts one by one.

usage: /usr/bin/python3 tests/transformers/make_sentence_fixtures.py [--out DIR]
The output is byte-for-byte the same on every run (seeded; transformers.fixtures_reproduce
checks it).
"""
import json

import torch

import make_fixtures as base
import make_modernbert_fixtures as modern

NAME = "minilm-sentence"
MAX_SEQ_LENGTH = 48
MODES = ["cls", "max", "mean", "mean_sqrt_len", "weightedmean", "lasttoken"]
VARIANTS = {
    "mean_normalize": (["mean"], True),
    "mean": (["mean"], False),
    "cls": (["cls"], False),
    "max": (["max"], False),
    "mean_sqrt_len": (["mean_sqrt_len"], False),
    "all": (MODES, True),
}
# name: (layers, dimensions); 0 = all.
MATRYOSHKA = {
    "layers1": (1, 0),
    "layers1_dims16": (1, 16),
    "dims32": (0, 32),
}
MODERN_NAME = "mmbert-sentence"
MODERN_MATRYOSHKA = {
    "layers1": (1, 0),
    "layers2_dims16": (2, 16),
    "dims32": (0, 32),
    "layers3_dims48": (3, 48),
}


def pooling_config(modes):
    """1_Pooling/config.json as sentence-transformers 3 writes it."""
    return {
        "word_embedding_dimension": base.HIDDEN,
        "pooling_mode_cls_token": "cls" in modes,
        "pooling_mode_mean_tokens": "mean" in modes,
        "pooling_mode_max_tokens": "max" in modes,
        "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len" in modes,
        "pooling_mode_weightedmean_tokens": "weightedmean" in modes,
        "pooling_mode_lasttoken": "lasttoken" in modes,
        "include_prompt": True,
    }


def modules(normalize):
    out = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        out.append({"idx": 2, "name": "2", "path": "2_Normalize",
                    "type": "sentence_transformers.models.Normalize"})
    return out


def pool(tokens, mask, modes):
    """Pooling.forward on token_embeddings (B×T×H) and attention_mask (B×T)."""
    out = []
    expanded = mask.unsqueeze(-1).expand(tokens.size()).float()
    if "cls" in modes:
        out.append(tokens[:, 0])
    if "max" in modes:
        masked = tokens.clone()
        masked[expanded == 0] = -1e9
        out.append(torch.max(masked, 1)[0])
    if "mean" in modes or "mean_sqrt_len" in modes:
        total = torch.sum(tokens * expanded, 1)
        count = torch.clamp(expanded.sum(1), min=1e-9)
        if "mean" in modes:
            out.append(total / count)
        if "mean_sqrt_len" in modes:
            out.append(total / torch.sqrt(count))
    if "weightedmean" in modes:
        weights = torch.arange(start=1, end=tokens.shape[1] + 1).unsqueeze(0).unsqueeze(-1)
        weighted = expanded * weights.expand(tokens.size()).float()
        out.append(torch.sum(tokens * weighted, 1) / torch.clamp(weighted.sum(1), min=1e-9))
    if "lasttoken" in modes:
        values, indices = torch.min(mask, 1, keepdim=False)
        last = torch.clamp(torch.where(values == 0, indices, tokens.shape[1]) - 1, min=0)
        gather = last.unsqueeze(-1).repeat(1, tokens.shape[2]).unsqueeze(1)
        out.append(torch.gather(tokens * expanded, 1, gather).squeeze(dim=1))
    return torch.cat(out, 1)


def padded(encoded, pad_id):
    width = max(len(e) for e in encoded)
    ids = torch.tensor([e + [pad_id] * (width - len(e)) for e in encoded])
    mask = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in encoded])
    return ids, mask


def hidden_states(model, encoded, pad_id, layers=0):
    """Layer `layers`' output (0: the last, BertModel's last_hidden_state) of one padded batch,
    and its mask."""
    captured = {}
    layer = model.layers[layers - 1 if layers else -1]
    hook = layer.register_forward_hook(lambda m, i, o: captured.setdefault("x", o))
    base.run(model, encoded, pad_id)
    hook.remove()
    return captured["x"], padded(encoded, pad_id)[1]


def modern_hidden_states(model, encoded, pad_id, layers=0):
    ids, mask = padded(encoded, pad_id)
    return model.hidden_states(ids, mask, layers or None), mask


def embeddings(model, encoded, pad_id, modes, normalize, layers=0, dimensions=0,
               states=hidden_states):
    tokens, mask = states(model, encoded, pad_id, layers)
    out = pool(tokens, mask, modes)
    if dimensions:
        out = out[:, :dimensions]
    return torch.nn.functional.normalize(out, p=2, dim=1) if normalize else out


def rounded(rows):
    return [[float(f"{v:.8g}") for v in row] for row in rows.tolist()]


def matryoshka(model, encoded, pad_id, variants, states):
    """Mean pooling, Normalize, cut as each variant says; checked against one by one."""
    out = {}
    for name, (layers, dimensions) in variants.items():
        run = lambda e: embeddings(model, e, pad_id, ["mean"], True, layers, dimensions, states)
        batch = run(encoded)
        single = torch.cat([run([e]) for e in encoded])
        assert (batch - single).abs().max() < 1e-5, f"{name}: batch differs from one by one"
        out[name] = {"layers": layers, "dimensions": dimensions, "embeddings": rounded(batch)}
        print(f"matryoshka {name}: {batch.shape[1]}-d")
    return out


def base_model_config(vocab, pad_id):
    """config.json of the Transformer module: a BertModel, no head, no labels."""
    c = base.config(vocab, False, pad_id)
    for key in ("problem_type", "id2label", "label2id"):
        del c[key]
    c["architectures"] = ["BertModel"]
    c["use_cache"] = True
    return c


def write_directory(name, vocab, config, tokenizer_config):
    """The sentence-transformers layout around a Transformer module at the directory's root: mean
    pooling, Normalize, max_seq_length, the base model's config and the tokenizer."""
    d = base.OUT / name
    (d / "1_Pooling").mkdir(parents=True, exist_ok=True)
    # 2_Normalize holds no file (Normalize.save writes none), so git and the Hub keep no folder.
    (d / "modules.json").write_text(json.dumps(modules(True), indent=2) + "\n")
    (d / "1_Pooling" / "config.json").write_text(json.dumps(pooling_config(["mean"]), indent=2) + "\n")
    sbert = {"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False}
    (d / "sentence_bert_config.json").write_text(json.dumps(sbert, indent=2) + "\n")
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (d / "tokenizer.json").write_text(
        json.dumps(base.tokenizer_json(vocab, base.SPECIALS_BERT, False)) + "\n")
    (d / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    return d


def write_fixture(model, vocab, pad_id):
    tc = {"do_lower_case": True, "model_max_length": MAX_SEQ_LENGTH, "tokenizer_class": "BertTokenizer"}
    d = write_directory(NAME, vocab, base_model_config(vocab, pad_id), tc)
    # BertModel's state dict: the encoder's names without "bert.", its pooler, no classifier.
    tensors = {k[len("bert."):]: v for k, v in model.tensors().items() if k.startswith("bert.")}
    base.save_safetensors(d / "model.safetensors", tensors, "F32")


def main():
    base.OUT = base.output_dir()
    vocab = base.vocabulary(base.SPECIALS_BERT)
    pad_id = vocab["[PAD]"]
    model = base.SequenceClassifier(len(vocab), False, pad_id).eval()
    base.randomise(model, 35)
    encoded = [base.encode(t.strip(), vocab, base.SPECIALS_BERT, MAX_SEQ_LENGTH) for t in base.TEXTS]
    reference = {"texts": base.TEXTS, "max_tokens": MAX_SEQ_LENGTH, "ids": encoded, "variants": {}}
    with torch.no_grad():
        for name, (modes, normalize) in VARIANTS.items():
            batch = embeddings(model, encoded, pad_id, modes, normalize)
            single = torch.cat([embeddings(model, [e], pad_id, modes, normalize) for e in encoded])
            assert (batch - single).abs().max() < 1e-5, f"{name}: batch differs from one by one"
            reference["variants"][name] = {
                "modes": modes, "normalize": normalize, "pooling": pooling_config(modes),
                "embeddings": rounded(batch)}
            print(f"{name}: {batch.shape[1]}-d, |value| max {batch.abs().max():.3f}")
        reference["matryoshka"] = matryoshka(model, encoded, pad_id, MATRYOSHKA, hidden_states)
    write_fixture(model, vocab, pad_id)
    (base.OUT / "sentence_reference.json").write_text(json.dumps(reference) + "\n")
    write_modern(vocab, pad_id)


def modern_config(vocab, pad_id):
    """config.json of a ModernBertModel saved on its own: no head, no labels."""
    c = modern.config(vocab, pad_id, modern.MODELS["mmbert"], "ModernBertModel")
    for key in ("id2label", "label2id", "classifier_pooling", "classifier_activation",
                "classifier_bias", "classifier_dropout"):
        del c[key]
    return c


def write_modern(vocab, pad_id):
    torch.set_num_threads(1)
    spec = modern.MODELS["mmbert"]
    model = modern.SequenceClassifier(len(vocab), spec).eval()
    modern.randomise(model, 43)
    encoded = [base.encode(t.strip(), vocab, base.SPECIALS_BERT, MAX_SEQ_LENGTH) for t in base.TEXTS]
    reference = {"texts": base.TEXTS, "max_tokens": MAX_SEQ_LENGTH, "ids": encoded}
    with torch.no_grad():
        batch = embeddings(model, encoded, pad_id, ["mean"], True, states=modern_hidden_states)
        reference["variants"] = {"mean_normalize": {
            "modes": ["mean"], "normalize": True, "pooling": pooling_config(["mean"]),
            "embeddings": rounded(batch)}}
        reference["matryoshka"] = matryoshka(model, encoded, pad_id, MODERN_MATRYOSHKA,
                                             modern_hidden_states)
    tc = {"model_max_length": MAX_SEQ_LENGTH, "tokenizer_class": "PreTrainedTokenizerFast"}
    d = write_directory(MODERN_NAME, vocab, modern_config(vocab, pad_id), tc)
    # ModernBertModel's state dict: the encoder's names without "model.", no head.
    tensors = {k[len("model."):]: v for k, v in model.tensors().items() if k.startswith("model.")}
    base.save_safetensors(d / "model.safetensors", tensors, "F32")
    (base.OUT / "mmbert-sentence-reference.json").write_text(json.dumps(reference) + "\n")
    print(f"{MODERN_NAME}: {batch.shape[1]}-d")


if __name__ == "__main__":
    main()
