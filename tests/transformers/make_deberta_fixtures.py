#!/usr/bin/env python3
"""Writes the DeBERTa-v2/v3 fixtures of tests/transformers/fixtures and their PyTorch reference.

Each fixture is a checkpoint directory in the published layout (config.json, model.safetensors,
tokenizer.json, tokenizer_config.json) with random weights at small shapes:

  deberta-v3-f32        DebertaV2ForSequenceClassification as microsoft/deberta-v3-base (and the
                        prompt-injection detectors fine-tuned from it) configure it: relative
                        attention with log position buckets (position_buckets 8 here, so texts
                        of more than 4 tokens reach the logarithmic buckets), share_att_key,
                        pos_att_type ["p2c", "c2p"], norm_rel_ebd "layer_norm", no absolute
                        positions (position_biased_input false), no token types; float32
  deberta-v2-f32        the older v2 layout: absolute positions added to the input, 2 token
                        types, embedding_size 48 projected to hidden 64 (embed_proj), no buckets
                        (max_relative_positions 16, so longer texts clamp their distances),
                        separate pos_key_proj / pos_query_proj, pos_att_type as the string
                        "p2c|c2p", no rel_embeddings LayerNorm; float32
  deberta-v3-token-f32  DebertaV2ForTokenClassification over deberta-v3's config; float32

deberta-reference.json holds, per fixture, the token ids and the logits of the reference model
below (sequence heads: one row a text; the token head: one row a token, the texts' tokens one
after another), run on one padded batch of all texts and checked against the texts one by one;
and the relative-position buckets (make_log_bucket_position) of every distance of deberta-v3's
config and of deberta-v3-base's (256 buckets over 512 positions). The model is written from transformers' modeling_deberta_v2.py (eval
mode): DebertaV2Embeddings (word + position when position_biased_input + token type when
type_vocab_size > 0, embed_proj, LayerNorm, times the mask), DebertaV2Encoder (rel_embeddings,
LayerNorm of them when norm_rel_ebd says so, build_relative_position), DisentangledSelfAttention
(the content score, c2p and p2c gathered at clamp(±relative position + span), each over
sqrt(head_dim × scale_factor), XSoftmax over the padding mask), post-norm outputs,
ContextPooler (the first token, dense, pooler_hidden_act) and the classifier. The tokenizer is
make_fixtures.py's WordPiece (the tokenizer.json runner is verified separately, tests/tokenizers).

usage: /usr/bin/python3 tests/transformers/make_deberta_fixtures.py [--out DIR]
The output is byte-for-byte the same on every run (seeded; ctest transformers.fixtures_reproduce).
"""
import json
import math

import torch

import make_fixtures as common

HIDDEN, HEADS, INTERMEDIATE, MAX_POSITIONS, LAYERS = 64, 4, 128, 64, 2
HEAD_DIM = HIDDEN // HEADS
TOKEN_LABELS = ["O", "B-EMAIL", "I-EMAIL", "B-PHONE", "I-PHONE"]

MODELS = {
    "deberta-v3": dict(embedding_size=HIDDEN, position_biased_input=False, type_vocab_size=0,
                       position_buckets=8, max_relative_positions=-1, share_att_key=True,
                       pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", seed=51),
    "deberta-v2": dict(embedding_size=48, position_biased_input=True, type_vocab_size=2,
                       position_buckets=-1, max_relative_positions=16, share_att_key=False,
                       pos_att_type="p2c|c2p", norm_rel_ebd="none", seed=52),
}
EPS = 1e-7


def att_types(spec):
    t = spec["pos_att_type"]
    return [x.strip() for x in t.lower().split("|")] if isinstance(t, str) else t


def relative_span(spec):
    """(max_relative_positions, att_span) as DebertaV2Encoder / DisentangledSelfAttention set them."""
    max_rel = spec["max_relative_positions"]
    if max_rel < 1:
        max_rel = MAX_POSITIONS
    return max_rel, spec["position_buckets"] if spec["position_buckets"] > 0 else max_rel


def make_log_bucket_position(relative_pos, bucket_size, max_position):
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid),
                          torch.tensor(mid - 1).type_as(relative_pos), torch.abs(relative_pos))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid))
                         * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)


def build_relative_position(query_size, key_size, bucket_size, max_position):
    q_ids, k_ids = torch.arange(0, query_size), torch.arange(0, key_size)
    rel = q_ids[:, None] - k_ids[None, :]
    if bucket_size > 0 and max_position > 0:
        rel = make_log_bucket_position(rel, bucket_size, max_position)
    return rel.to(torch.long)[:query_size, :].unsqueeze(0)


class Attention(torch.nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        self.query_proj = torch.nn.Linear(HIDDEN, HIDDEN)
        self.key_proj = torch.nn.Linear(HIDDEN, HIDDEN)
        self.value_proj = torch.nn.Linear(HIDDEN, HIDDEN)
        self.types = att_types(spec)
        if not spec["share_att_key"]:
            self.pos_key_proj = torch.nn.Linear(HIDDEN, HIDDEN)
            self.pos_query_proj = torch.nn.Linear(HIDDEN, HIDDEN)
        self.dense = torch.nn.Linear(HIDDEN, HIDDEN)
        self.norm = torch.nn.LayerNorm(HIDDEN, eps=EPS)

    @staticmethod
    def heads(x):
        b, t, _ = x.shape
        return x.view(b, t, HEADS, HEAD_DIM).permute(0, 2, 1, 3).contiguous().view(-1, t, HEAD_DIM)

    def forward(self, x, mask, relative_pos, rel_embeddings):
        b, t, _ = x.shape
        q, k, v = self.heads(self.query_proj(x)), self.heads(self.key_proj(x)), self.heads(self.value_proj(x))
        scale_factor = 1 + ("c2p" in self.types) + ("p2c" in self.types)
        scale = torch.sqrt(torch.tensor(q.size(-1), dtype=torch.float) * scale_factor)
        scores = torch.bmm(q, k.transpose(-1, -2)) / scale
        _, span = relative_span(self.spec)
        rel = rel_embeddings[0: span * 2, :].unsqueeze(0)
        relative_pos = relative_pos.unsqueeze(1)  # 1 × 1 × q × k
        if self.spec["share_att_key"]:
            pos_q = self.heads(self.query_proj(rel)).repeat(b, 1, 1)
            pos_k = self.heads(self.key_proj(rel)).repeat(b, 1, 1)
        else:
            pos_q = self.heads(self.pos_query_proj(rel)).repeat(b, 1, 1)
            pos_k = self.heads(self.pos_key_proj(rel)).repeat(b, 1, 1)
        if "c2p" in self.types:
            c2p = torch.bmm(q, pos_k.transpose(-1, -2))
            c2p_pos = torch.clamp(relative_pos + span, 0, span * 2 - 1)
            c2p = torch.gather(c2p, dim=-1, index=c2p_pos.squeeze(0).expand([q.size(0), q.size(1), t]))
            scores = scores + c2p / scale
        if "p2c" in self.types:
            p2c_pos = torch.clamp(-relative_pos + span, 0, span * 2 - 1)
            p2c = torch.bmm(k, pos_q.transpose(-1, -2))
            p2c = torch.gather(p2c, dim=-1, index=p2c_pos.squeeze(0).expand([q.size(0), t, t])).transpose(-1, -2)
            scores = scores + p2c / scale
        scores = scores.view(-1, HEADS, t, t)
        # XSoftmax with get_attention_mask's query × key mask
        full = (mask[:, None, None, :] * mask[:, None, :, None]).bool()
        probs = torch.softmax(scores.masked_fill(~full, torch.finfo(torch.float32).min), -1)
        probs = probs.masked_fill(~full, 0)
        context = torch.bmm(probs.view(-1, t, t), v).view(-1, HEADS, t, HEAD_DIM)
        context = context.permute(0, 2, 1, 3).contiguous().view(b, t, HIDDEN)
        return self.norm(self.dense(context) + x)


class Layer(torch.nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.attention = Attention(spec)
        self.intermediate = torch.nn.Linear(HIDDEN, INTERMEDIATE)
        self.output = torch.nn.Linear(INTERMEDIATE, HIDDEN)
        self.output_norm = torch.nn.LayerNorm(HIDDEN, eps=EPS)

    def forward(self, x, mask, relative_pos, rel_embeddings):
        a = self.attention(x, mask, relative_pos, rel_embeddings)
        return self.output_norm(self.output(torch.nn.functional.gelu(self.intermediate(a))) + a)


class Model(torch.nn.Module):
    def __init__(self, vocab_size, spec, labels, token_head=False):
        super().__init__()
        self.spec, self.token_head = spec, token_head
        e = spec["embedding_size"]
        self.word = torch.nn.Embedding(vocab_size, e)
        self.position = torch.nn.Embedding(MAX_POSITIONS, e) if spec["position_biased_input"] else None
        self.token_type = torch.nn.Embedding(spec["type_vocab_size"], e) if spec["type_vocab_size"] else None
        self.embed_proj = torch.nn.Linear(e, HIDDEN, bias=False) if e != HIDDEN else None
        self.embedding_norm = torch.nn.LayerNorm(HIDDEN, eps=EPS)
        self.layers = torch.nn.ModuleList([Layer(spec) for _ in range(LAYERS)])
        max_rel, _ = relative_span(spec)
        size = spec["position_buckets"] * 2 if spec["position_buckets"] > 0 else max_rel * 2
        self.rel_embeddings = torch.nn.Embedding(size, HIDDEN)
        self.rel_norm = torch.nn.LayerNorm(HIDDEN, eps=EPS) if "layer_norm" in spec["norm_rel_ebd"] else None
        if not token_head:
            self.pooler = torch.nn.Linear(HIDDEN, HIDDEN)
        self.classifier = torch.nn.Linear(HIDDEN, len(labels))

    def hidden_states(self, ids, mask, types=None):
        t = ids.shape[1]
        x = self.word(ids)
        if self.position is not None:
            x = x + self.position(torch.arange(t).unsqueeze(0))
        if self.token_type is not None:
            x = x + self.token_type(torch.zeros_like(ids) if types is None else types)
        if self.embed_proj is not None:
            x = self.embed_proj(x)
        x = self.embedding_norm(x) * mask.unsqueeze(2).float()
        max_rel, _ = relative_span(self.spec)
        relative_pos = build_relative_position(t, t, self.spec["position_buckets"], max_rel)
        rel = self.rel_embeddings.weight
        if self.rel_norm is not None:
            rel = self.rel_norm(rel)
        for layer in self.layers:
            x = layer(x, mask, relative_pos, rel)
        return x

    def forward(self, ids, mask, types=None):
        x = self.hidden_states(ids, mask, types)
        if self.token_head:
            return self.classifier(x)
        return self.classifier(torch.nn.functional.gelu(self.pooler(x[:, 0])))

    def tensors(self):
        """The state dict under the names a published checkpoint uses."""
        p = "deberta."
        out = {p + "embeddings.word_embeddings.weight": self.word.weight}

        def put(name, module):
            out[name + ".weight"] = module.weight
            if module.bias is not None:
                out[name + ".bias"] = module.bias

        if self.position is not None:
            out[p + "embeddings.position_embeddings.weight"] = self.position.weight
        if self.token_type is not None:
            out[p + "embeddings.token_type_embeddings.weight"] = self.token_type.weight
        if self.embed_proj is not None:
            out[p + "embeddings.embed_proj.weight"] = self.embed_proj.weight
        put(p + "embeddings.LayerNorm", self.embedding_norm)
        out[p + "encoder.rel_embeddings.weight"] = self.rel_embeddings.weight
        if self.rel_norm is not None:
            put(p + "encoder.LayerNorm", self.rel_norm)
        for i, layer in enumerate(self.layers):
            lp = f"{p}encoder.layer.{i}."
            a = layer.attention
            for name in ("query_proj", "key_proj", "value_proj"):
                put(lp + "attention.self." + name, getattr(a, name))
            if not self.spec["share_att_key"]:
                put(lp + "attention.self.pos_key_proj", a.pos_key_proj)
                put(lp + "attention.self.pos_query_proj", a.pos_query_proj)
            put(lp + "attention.output.dense", a.dense)
            put(lp + "attention.output.LayerNorm", a.norm)
            put(lp + "intermediate.dense", layer.intermediate)
            put(lp + "output.dense", layer.output)
            put(lp + "output.LayerNorm", layer.output_norm)
        if not self.token_head:
            put("pooler.dense", self.pooler)
        put("classifier", self.classifier)
        return out


def randomise(model, seed):
    """Logits spread over a few units (as make_fixtures.randomise), matrices at 1/sqrt(in) (as
    make_modernbert_fixtures.randomise: at 1.5/sqrt(in) bfloat16 and int8 rounding move the
    probabilities of these random weights by 0.02 and 0.13)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            noise = torch.randn(t.shape, generator=g)
            if "norm" in name:
                t.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * noise)
            elif t.dim() == 2 and name.split(".")[0] in ("word", "position", "token_type", "rel_embeddings"):
                t.copy_(noise)
            elif t.dim() == 2:
                t.copy_(noise / math.sqrt(t.shape[1]))
            else:
                t.copy_(0.1 * noise)
        model.classifier.weight.mul_(3.0)


def config(vocab, pad_id, spec, architecture, labels):
    return {
        "architectures": [architecture], "model_type": "deberta-v2",
        "vocab_size": len(vocab), "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": MAX_POSITIONS, "type_vocab_size": spec["type_vocab_size"],
        "initializer_range": 0.02, "layer_norm_eps": EPS, "relative_attention": True,
        "max_relative_positions": spec["max_relative_positions"], "pad_token_id": pad_id,
        "position_biased_input": spec["position_biased_input"], "pos_att_type": spec["pos_att_type"],
        "position_buckets": spec["position_buckets"], "norm_rel_ebd": spec["norm_rel_ebd"],
        "share_att_key": spec["share_att_key"], "embedding_size": spec["embedding_size"],
        "pooler_dropout": 0, "pooler_hidden_act": "gelu", "pooler_hidden_size": HIDDEN,
        "id2label": {str(i): l for i, l in enumerate(labels)},
        "label2id": {l: i for i, l in enumerate(labels)},
        "torch_dtype": "float32", "transformers_version": "4.46.0",
    }


def write_fixture(out, name, vocab, pad_id, spec, model, architecture, labels):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config(vocab, pad_id, spec, architecture, labels), indent=2) + "\n")
    tokenizer = common.tokenizer_json(vocab, common.SPECIALS_BERT, False)
    (d / "tokenizer.json").write_text(json.dumps(tokenizer) + "\n")
    tc = {"model_max_length": MAX_POSITIONS, "tokenizer_class": "DebertaV2Tokenizer",
          "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]"}
    (d / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")
    common.save_safetensors(d / "model.safetensors", model.tensors(), "F32")


def main():
    out = common.output_dir()
    vocab = common.vocabulary(common.SPECIALS_BERT)
    pad_id = vocab["[PAD]"]
    encoded = [common.encode(t, vocab, common.SPECIALS_BERT, MAX_POSITIONS) for t in common.TEXTS]
    reference = {"texts": common.TEXTS, "labels": common.LABELS, "models": {}}
    runs = [(n, s, "DebertaV2ForSequenceClassification", common.LABELS, False) for n, s in MODELS.items()]
    runs.append(("deberta-v3-token", dict(MODELS["deberta-v3"], seed=53),
                 "DebertaV2ForTokenClassification", TOKEN_LABELS, True))
    for name, spec, architecture, labels, token in runs:
        model = Model(len(vocab), spec, labels, token).eval()
        randomise(model, spec["seed"])
        with torch.no_grad():
            batch = common.run(model, encoded, pad_id)
            single = [common.run(model, [e], pad_id) for e in encoded]
        if token:  # every text's own tokens, one row a token
            rows = torch.cat([batch[i, : len(e)] for i, e in enumerate(encoded)])
            alone = torch.cat([s[0] for s in single])
        else:
            rows, alone = batch, torch.cat(single)
        assert (rows - alone).abs().max() < 5e-5, f"{name}: batch differs from one by one"
        reference["models"][name] = {"max_tokens": MAX_POSITIONS, "ids": encoded, "logits": rows.tolist()}
        write_fixture(out, name + "-f32", vocab, pad_id, spec, model, architecture, labels)
        print(f"{name}: |logit| max {rows.abs().max():.2f}, longest text {max(len(e) for e in encoded)} tokens")
    # The buckets of this fixture and of deberta-v3-base's own config (256 buckets, 512 positions).
    reference["buckets"] = []
    for buckets, max_rel in [(MODELS["deberta-v3"]["position_buckets"], relative_span(MODELS["deberta-v3"])[0]),
                             (256, 512)]:
        distances = torch.arange(-(max_rel - 1), max_rel)
        reference["buckets"].append({
            "position_buckets": buckets, "max_relative_positions": max_rel, "from": -(max_rel - 1),
            "bucket": make_log_bucket_position(distances, buckets, max_rel).to(torch.long).tolist()})
    (out / "deberta-reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
