#!/usr/bin/env python3
"""Writes the ModernBERT / mmBERT fixtures of tests/transformers/fixtures and their PyTorch reference.

Each fixture is a checkpoint directory in the published layout (config.json, model.safetensors,
tokenizer.json, tokenizer_config.json) with random weights at small shapes:

  modernbert-f32   ModernBertForSequenceClassification as ModernBERT-base configures it (no
                   biases, CLS pooling, global RoPE theta 160000 and local 10000), 4 layers with
                   global attention every 2nd, a local window of 8 tokens (±4) so most texts are
                   longer than the window; float32 tensors
  modernbert-bf16  the same weights rounded to bfloat16 (BF16 tensors)
  mmbert-f32       an mmBERT-like config: mean pooling, every bias on, both thetas 160000, YaRN
                   `rope_scaling` (factor 4 over original_max_position_embeddings 32), a local
                   window of 16, global attention every 3rd layer; float32

modernbert-reference.json holds the texts, the token ids and the logits of the reference model
below, run on one padded batch of all texts (checked against the texts one by one). The model is
written from transformers' modeling_modernbert.py, eager attention path (additive finfo.min
padding mask; the sliding-window mask |i − j| ≤ local_attention // 2 on layers whose index is not
a multiple of global_attn_every_n_layers; RoPE with rotate_half; GeGLU; pre-norm, no attn_norm in
layer 0; final_norm; head.dense → classifier_activation → head.norm → classifier), and YaRN from
modeling_rope_utils.py's _compute_yarn_parameters. transformers applies `rope_scaling` to the
RoPE of both layer types, each with its own theta; so does this reference. The tokenizer is
make_fixtures.py's WordPiece (the tokenizer.json runner is verified separately, tests/tokenizers).
TokenClassifier (ModernBertForTokenClassification: the prediction head and classifier on every
token) is what make_token_fixtures.py writes its ModernBERT and mmBERT token fixtures with.

usage: /usr/bin/python3 tests/transformers/make_modernbert_fixtures.py [--out DIR]
The output is byte-for-byte the same on every run (seeded; ctest transformers.fixtures_reproduce).
"""
import argparse
import json
import math
import pathlib

import torch

import make_fixtures as common

HIDDEN, HEADS, INTERMEDIATE, MAX_POSITIONS = 64, 4, 96, 128
HEAD_DIM = HIDDEN // HEADS

MODELS = {
    "modernbert": dict(
        layers=4, global_every=2, local_attention=8, global_theta=160000.0, local_theta=10000.0,
        bias=False, pooling="cls", rope_scaling=None, seed=41),
    "mmbert": dict(
        layers=3, global_every=3, local_attention=16, global_theta=160000.0, local_theta=160000.0,
        bias=True, pooling="mean", seed=42,
        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}),
}


def inverse_frequencies(theta, scaling):
    """(inv_freq, attention_scaling) as transformers' default and YaRN RoPE compute them."""
    dim = HEAD_DIM
    if scaling is None:
        return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0
    factor = scaling["factor"]
    original = scaling.get("original_max_position_embeddings", MAX_POSITIONS)
    attention_factor = scaling.get("attention_factor")
    if attention_factor is None:
        attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    beta_fast, beta_slow = scaling.get("beta_fast") or 32, scaling.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(theta))

    low, high = math.floor(correction_dim(beta_fast)), math.ceil(correction_dim(beta_slow))
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = theta ** (torch.arange(0, dim, 2).float() / dim)
    extrapolation = 1 - ramp
    inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation
    return inv, attention_factor


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Norm(torch.nn.Module):
    """nn.LayerNorm(bias=norm_bias), which torch 1.13 lacks."""

    def __init__(self, bias):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(HIDDEN))
        self.bias = torch.nn.Parameter(torch.zeros(HIDDEN)) if bias else None

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (HIDDEN,), self.weight, self.bias, 1e-5)


class Layer(torch.nn.Module):
    def __init__(self, index, spec):
        super().__init__()
        bias = spec["bias"]
        self.attn_norm = Norm(bias) if index > 0 else None
        self.Wqkv = torch.nn.Linear(HIDDEN, 3 * HIDDEN, bias=bias)
        self.Wo = torch.nn.Linear(HIDDEN, HIDDEN, bias=bias)
        self.mlp_norm = Norm(bias)
        self.Wi = torch.nn.Linear(HIDDEN, 2 * INTERMEDIATE, bias=bias)
        self.mlp_Wo = torch.nn.Linear(INTERMEDIATE, HIDDEN, bias=bias)
        self.local = index % spec["global_every"] != 0

    def forward(self, x, global_mask, window_mask, rope):
        b, t, _ = x.shape
        h = x if self.attn_norm is None else self.attn_norm(x)
        qkv = self.Wqkv(h).view(b, t, 3, HEADS, HEAD_DIM)
        q, k, v = qkv.transpose(3, 1).unbind(dim=2)  # b × heads × t × head_dim
        cos, sin = rope[1] if self.local else rope[0]
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(2, 3)) * HEAD_DIM ** -0.5
        scores = scores + (window_mask if self.local else global_mask)
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32)
        context = torch.matmul(weights, v).transpose(1, 2).contiguous().view(b, t, HIDDEN)
        x = x + self.Wo(context)
        inner, gate = self.Wi(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.mlp_Wo(torch.nn.functional.gelu(inner) * gate)


class SequenceClassifier(torch.nn.Module):
    def __init__(self, vocab_size, spec, labels=len(common.LABELS)):
        super().__init__()
        self.spec = spec
        bias = spec["bias"]
        self.tok_embeddings = torch.nn.Embedding(vocab_size, HIDDEN)
        self.embedding_norm = Norm(bias)
        self.layers = torch.nn.ModuleList([Layer(i, spec) for i in range(spec["layers"])])
        self.final_norm = Norm(bias)
        self.head_dense = torch.nn.Linear(HIDDEN, HIDDEN, bias=bias)
        self.head_norm = Norm(bias)
        self.classifier = torch.nn.Linear(HIDDEN, labels)
        self.rope = [inverse_frequencies(spec["global_theta"], spec["rope_scaling"]),
                     inverse_frequencies(spec["local_theta"], spec["rope_scaling"])]

    def hidden_states(self, ids, mask, layers=None):
        """ModernBertModel: every token's final hidden state (after final_norm). With `layers`
        < all, output_hidden_states' hidden_states[layers]: the residual stream after that many
        layers, which ModernBertModel collects before final_norm."""
        t = ids.shape[1]
        positions = torch.arange(t).unsqueeze(0).float()
        rope = []
        for inv_freq, scaling in self.rope:
            freqs = (inv_freq[None, :, None] @ positions[:, None, :]).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            rope.append((emb.cos() * scaling, emb.sin() * scaling))
        minimum = torch.finfo(torch.float32).min
        global_mask = (1.0 - mask[:, None, None, :].float()) * minimum
        global_mask = global_mask.expand(-1, 1, t, t)
        rows = torch.arange(t).unsqueeze(0)
        inside = (torch.abs(rows - rows.T) <= self.spec["local_attention"] // 2)[None, None]
        window_mask = global_mask.masked_fill(inside.logical_not(), minimum)
        x = self.embedding_norm(self.tok_embeddings(ids))
        n = len(self.layers) if layers is None else layers
        for layer in self.layers[:n]:
            x = layer(x, global_mask, window_mask, rope)
        return self.final_norm(x) if n == len(self.layers) else x

    def prediction_head(self, x):
        """ModernBertPredictionHead: head.dense, classifier_activation (gelu), head.norm."""
        return self.head_norm(torch.nn.functional.gelu(self.head_dense(x)))

    def forward(self, ids, mask):
        x = self.hidden_states(ids, mask)
        if self.spec["pooling"] == "cls":
            pooled = x[:, 0]
        else:
            pooled = (x * mask.unsqueeze(-1)).sum(dim=1) / mask.sum(dim=1, keepdim=True)
        return self.classifier(self.prediction_head(pooled))

    def tensors(self):
        """The state dict under the names a published checkpoint uses."""
        out = {"model.embeddings.tok_embeddings.weight": self.tok_embeddings.weight}

        def put(name, module):
            out[name + ".weight"] = module.weight
            if module.bias is not None:
                out[name + ".bias"] = module.bias

        put("model.embeddings.norm", self.embedding_norm)
        for i, layer in enumerate(self.layers):
            p = f"model.layers.{i}."
            if layer.attn_norm is not None:
                put(p + "attn_norm", layer.attn_norm)
            put(p + "attn.Wqkv", layer.Wqkv)
            put(p + "attn.Wo", layer.Wo)
            put(p + "mlp_norm", layer.mlp_norm)
            put(p + "mlp.Wi", layer.Wi)
            put(p + "mlp.Wo", layer.mlp_Wo)
        put("model.final_norm", self.final_norm)
        put("head.dense", self.head_dense)
        put("head.norm", self.head_norm)
        put("classifier", self.classifier)
        return out


class TokenClassifier(SequenceClassifier):
    """ModernBertForTokenClassification: the prediction head and classifier on every token
    (padding rows too, as transformers computes them; the pipeline reads a text's own)."""

    def forward(self, ids, mask):
        return self.classifier(self.prediction_head(self.hidden_states(ids, mask)))


def randomise(model, seed):
    """Logits spread over a few units, not near-uniform (as make_fixtures.randomise), with matrices
    at 1/sqrt(in): ModernBERT's pre-norm residual stream grows with depth, and at make_fixtures'
    1.5/sqrt(in) bfloat16 rounding moves probabilities by 0.06."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            noise = torch.randn(t.shape, generator=g)
            if "norm" in name:
                t.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * noise)
            elif name.startswith("tok_embeddings"):
                t.copy_(noise)
            elif t.dim() == 2:
                t.copy_(noise / math.sqrt(t.shape[1]))
            else:
                t.copy_(0.1 * noise)
        model.classifier.weight.mul_(3.0)


def config(vocab, pad_id, spec, architecture="ModernBertForSequenceClassification",
           labels=common.LABELS, max_positions=MAX_POSITIONS):
    c = {
        "architectures": [architecture], "model_type": "modernbert",
        "vocab_size": len(vocab), "hidden_size": HIDDEN, "num_hidden_layers": spec["layers"],
        "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE,
        "hidden_activation": "gelu", "max_position_embeddings": max_positions,
        "norm_eps": 1e-05, "norm_bias": spec["bias"], "attention_bias": spec["bias"],
        "mlp_bias": spec["bias"], "classifier_bias": spec["bias"], "decoder_bias": True,
        "classifier_activation": "gelu", "classifier_pooling": spec["pooling"],
        "classifier_dropout": 0.0, "attention_dropout": 0.0, "embedding_dropout": 0.0,
        "mlp_dropout": 0.0, "global_attn_every_n_layers": spec["global_every"],
        "local_attention": spec["local_attention"], "global_rope_theta": spec["global_theta"],
        "local_rope_theta": spec["local_theta"], "initializer_range": 0.02,
        "initializer_cutoff_factor": 2.0, "pad_token_id": pad_id, "cls_token_id": pad_id + 2,
        "sep_token_id": pad_id + 3, "bos_token_id": pad_id + 2, "eos_token_id": pad_id + 3,
        "id2label": {str(i): l for i, l in enumerate(labels)},
        "label2id": {l: i for i, l in enumerate(labels)},
        "torch_dtype": "float32", "transformers_version": "4.48.0",
    }
    if spec["rope_scaling"] is not None:
        c["rope_scaling"] = spec["rope_scaling"]
    return c


def write_fixture(out, name, vocab, pad_id, spec, model, dtype):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config(vocab, pad_id, spec), indent=2) + "\n")
    tokenizer = common.tokenizer_json(vocab, common.SPECIALS_BERT, False)
    (d / "tokenizer.json").write_text(json.dumps(tokenizer) + "\n")
    tc = {"model_max_length": MAX_POSITIONS, "tokenizer_class": "PreTrainedTokenizerFast",
          "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]"}
    (d / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")
    common.save_safetensors(d / "model.safetensors", model.tensors(), dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(common.OUT))
    out = pathlib.Path(parser.parse_args().out)
    torch.set_num_threads(1)
    vocab = common.vocabulary(common.SPECIALS_BERT)
    pad_id = vocab["[PAD]"]
    encoded = [common.encode(t, vocab, common.SPECIALS_BERT, MAX_POSITIONS) for t in common.TEXTS]
    reference = {"texts": common.TEXTS, "labels": common.LABELS, "models": {}}
    for name, spec in MODELS.items():
        model = SequenceClassifier(len(vocab), spec).eval()
        randomise(model, spec["seed"])
        batch = common.run(model, encoded, pad_id)
        single = torch.cat([common.run(model, [e], pad_id) for e in encoded])
        # float32 rounding differs with the padded width; well inside the 1e-4 the tests allow
        assert (batch - single).abs().max() < 5e-5, "reference: batch differs from one by one"
        reference["models"][name] = {"max_tokens": MAX_POSITIONS, "ids": encoded, "logits": batch.tolist()}
        write_fixture(out, name + "-f32", vocab, pad_id, spec, model, "F32")
        print(f"{name}: |logit| max {batch.abs().max():.2f}, argmax counts "
              f"{torch.bincount(batch.argmax(1), minlength=len(common.LABELS)).tolist()}, "
              f"longest text {max(len(e) for e in encoded)} tokens, window ±{spec['local_attention'] // 2}")
        if name == "modernbert":
            rounded = SequenceClassifier(len(vocab), spec).eval()
            rounded.load_state_dict(model.state_dict())
            with torch.no_grad():
                for t in rounded.parameters():
                    t.copy_(t.to(torch.bfloat16).to(torch.float32))
            low = common.run(rounded, encoded, pad_id)
            gap = (torch.softmax(low, 1) - torch.softmax(batch, 1)).abs().max().item()
            assert torch.equal(low.argmax(1), batch.argmax(1)) and gap < 0.02, gap
            print(f"{name} bf16 weights: probabilities within {gap:.4f} of float32")
            write_fixture(out, name + "-bf16", vocab, pad_id, spec, model, "BF16")
    (out / "modernbert-reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
