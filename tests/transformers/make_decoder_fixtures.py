#!/usr/bin/env python3
"""Writes the decoder sentence-embedding fixtures of tests/transformers/fixtures and their reference.

  gemma3-sentence  a sentence-transformers directory laid out as google/embeddinggemma-300m
                   publishes it: modules.json (Transformer at "", Pooling at 1_Pooling (mean),
                   Dense at 2_Dense and 3_Dense, Normalize at 4_Normalize), each Dense's
                   config.json (in_features, out_features, bias, activation_function) and
                   model.safetensors (linear.weight, linear.bias), config_sentence_transformers.json
                   (prompts, default_prompt_name null), sentence_bert_config.json, and the
                   Transformer's Gemma3TextModel: config.json (model_type gemma3_text,
                   use_bidirectional_attention true, layer_types, sliding_window,
                   query_pre_attn_scalar, rope_theta and rope_local_base_freq), model.safetensors
                   with Gemma3TextModel's names (no prefix), tokenizer.json (BPE with byte_fallback,
                   spaces replaced by "▁", <bos> … <eos> as embeddinggemma's post-processor adds
                   them). 2_Dense is Identity without bias as published; 3_Dense is Tanh with a
                   bias so that both Dense forms are computed.
  qwen3-sentence   the same as Qwen/Qwen3-Embedding-0.6B publishes it: Transformer, Pooling
                   (lasttoken), Normalize; config.json of architectures ["Qwen3ForCausalLM"]
                   (model_type qwen3, causal, use_sliding_window with max_window_layers, so the later
                   layers slide), model.safetensors with Qwen3Model's names; tokenizer.json a
                   Qwen2-style byte-level BPE (NFC, the Qwen2 split regex, <|endoftext|> appended by
                   TemplateProcessing); its "query" instruction prompt.

Small shapes: hidden 32, 4 heads over 2 key/value heads of head_dim 16 (heads × head_dim = 64,
not hidden), intermediate 48, 3 layers, sliding windows of 8 (Gemma) and 6 (Qwen3) tokens, shorter
than the long texts. Weights are seeded random values rounded to bfloat16 and stored as BF16 (as
both models are published), the reference computing in float32 from the same values.

The forward passes are written from transformers' modeling_gemma3.py and modeling_qwen3.py
(transformers itself is not installed here): Gemma3RMSNorm's (1 + weight) in float32, the
embedding scaled by hidden_size ** 0.5, q_norm / k_norm per head, repeat_kv, RoPE per layer type,
the scaling query_pre_attn_scalar ** -0.5 (Gemma) or head_dim ** -0.5 (Qwen3), the masks of
masking_utils (causal: kv ≤ q; sliding: kv > q − sliding_window; Gemma's bidirectional overlay:
|q − kv| < sliding_window), the gated MLP act(gate) · up, and the four norms of a Gemma layer.
Each batch is padded as the published tokenizers pad it (Gemma right, Qwen3 left) with position
ids 0..T−1 (transformers' default cache_position) and the padding masked, then pooled as
sentence_transformers/models/Pooling.py does (mean, and lasttoken by flip/max), then Dense and
Normalize. The script checks the batch against the texts one by one.

The tokenizers are written here too (a few hundred tokens trained on the texts) and encoded by a
re-implementation of the tokenizers library's BPE for these files: NFC, the Qwen2 split regex
(with Python's re, \\p{L} as [^\\W\\d_] and \\p{N} as \\d, which agree on the fixture's texts),
byte-level mapping, merges by rank; Gemma's "▁" replacement with byte fallback.

The reference (decoder-sentence-reference.json) holds per fixture the texts, and per variant the
token ids and embeddings: "plain" (no prompt), "query" (the "query" prompt prepended to the text
before tokenization, as SentenceTransformer.encode(prompt_name="query") does), "layers2_dims16"
(2D Matryoshka: hidden_states[2], no final norm, pooled, through the Dense modules, its first 16
values L2-normalized), and for Gemma "causal" (use_bidirectional_attention false) and
"query_without_prompt" (the "query" prompt with Pooling's include_prompt false: its tokens left
out of the mean).

usage: /usr/bin/python3 tests/transformers/make_decoder_fixtures.py [--out DIR]
The output is byte-for-byte the same on every run (seeded).
"""
import json
import math
import re
import unicodedata

import torch

import make_fixtures as base

HIDDEN = 32
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
INTERMEDIATE = 48
LAYERS = 3
MAX_SEQ_LENGTH = 64
EPS = 1e-6

TEXTS = [
    "hi",
    "hello!",
    "write a python function to sort a list",
    "solve the equation x + 2 = 5",
    "Café prices: how much does a coffee cost?",
    "explain the difference between a thread and a lock in java, with an example of each",
    "compile, test, build, deploy: the server keeps crashing on http requests after the update",
    "  tell me a joke about cats  ",
    "prove that there are infinitely many primes, then sort the first ten of them",
]
# Extra training text for the tokenizers' merges.
CORPUS = TEXTS + [
    "the quick brown fox jumps over the lazy dog",
    "task: search result | query: title: none | text: ",
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
]

GEMMA = "gemma3-sentence"
QWEN = "qwen3-sentence"
GEMMA_PROMPTS = {
    "query": "task: search result | query: ",
    "document": "title: none | text: ",
    "Classification": "task: classification | query: ",
}
QWEN_PROMPTS = {
    "query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
    "document": "",
}


# ---------------------------------------------------------------------------------------------
# Tokenizers


def train_merges(words, count):
    """Greedy BPE training: `count` merges of the most frequent pair (ties: the smallest pair)."""
    words = [list(w) for w in words]
    merges = []
    for _ in range(count):
        pairs = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + 1
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        words = [merge_word(w, best) for w in words]
    return merges


def merge_word(w, pair):
    out, i = [], 0
    while i < len(w):
        if i + 1 < len(w) and (w[i], w[i + 1]) == pair:
            out.append(w[i] + w[i + 1])
            i += 2
        else:
            out.append(w[i])
            i += 1
    return out


def bpe(symbols, ranks):
    """The tokenizers library's BPE on one word: the lowest-ranked pair merged first."""
    w = list(symbols)
    while len(w) > 1:
        pairs = [(ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(w, w[1:]))]
        rank, _ = min(pairs)
        if rank == math.inf:
            break
        pair = next((w[i], w[i + 1]) for r, i in pairs if r == rank)
        w = merge_word(w, pair)
    return w


def byte_alphabet():
    """GPT-2's bytes_to_unicode."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


QWEN_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# Python's re has no \p{..}: letters as [^\W\d_], numbers as \d (the same on these texts).
QWEN_REGEX_PY = re.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|(?:[^\r\n\w]|_)?[^\W\d_]+|\d"
                           r"| ?(?:[^\s\w]|_)+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen_pieces(text):
    text = unicodedata.normalize("NFC", text)
    pieces = []
    pos = 0
    while pos < len(text):
        m = QWEN_REGEX_PY.match(text, pos)
        assert m and m.end() > pos, (text, pos)
        pieces.append(m.group())
        pos = m.end()
    return pieces


class QwenTokenizer:
    SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

    def __init__(self):
        self.alphabet = byte_alphabet()
        words = [self.mapped(p) for t in CORPUS for p in qwen_pieces(t)]
        self.merges = train_merges(words, 150)
        self.vocab = {}
        for b in range(256):
            self.vocab[self.alphabet[b]] = len(self.vocab)
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        for s in self.SPECIALS:
            self.vocab[s] = len(self.vocab)
        self.ranks = {m: i for i, m in enumerate(self.merges)}

    def mapped(self, piece):
        return "".join(self.alphabet[b] for b in piece.encode("utf-8"))

    def encode(self, text):
        ids = []
        for p in qwen_pieces(text):
            ids += [self.vocab[s] for s in bpe(self.mapped(p), self.ranks)]
        return ids[: MAX_SEQ_LENGTH - 1] + [self.vocab["<|endoftext|>"]]

    def json(self):
        special = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                                "normalized": False, "special": True}
        eot = self.vocab["<|endoftext|>"]
        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [special(self.vocab[s], s) for s in self.SPECIALS],
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN_REGEX}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 1}}],
                "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [eot], "tokens": ["<|endoftext|>"]}}},
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": self.vocab, "merges": [f"{a} {b}" for a, b in self.merges]},
        }


class GemmaTokenizer:
    SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
    LEFT_OUT = "é"  # not in the vocabulary: byte fallback writes it as <0xC3><0xA9>

    def __init__(self):
        words = [t.replace(" ", "▁") for t in CORPUS]
        self.vocab = {s: i for i, s in enumerate(self.SPECIALS)}
        for b in range(256):
            self.vocab[f"<0x{b:02X}>"] = len(self.vocab)
        for ch in sorted({c for w in words for c in w} - {self.LEFT_OUT}):
            self.vocab[ch] = len(self.vocab)
        words = [w.replace(self.LEFT_OUT, "") for w in words]
        self.merges = train_merges(words, 150)
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.ranks = {m: i for i, m in enumerate(self.merges)}

    def encode(self, text):
        ids = []
        for s in bpe(text.replace(" ", "▁"), self.ranks):
            if s in self.vocab:
                ids.append(self.vocab[s])
            else:
                ids += [self.vocab[f"<0x{b:02X}>"] for b in s.encode("utf-8")]
        return [self.vocab["<bos>"]] + ids[: MAX_SEQ_LENGTH - 2] + [self.vocab["<eos>"]]

    def json(self):
        special = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                                "normalized": False, "special": True}
        bos, eos = self.vocab["<bos>"], self.vocab["<eos>"]
        template = [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": "<eos>", "type_id": 0}}]
        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [special(i, s) for i, s in enumerate(self.SPECIALS)],
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            "pre_tokenizer": None,
            "post_processor": {"type": "TemplateProcessing", "single": template, "pair": template,
                               "special_tokens": {"<bos>": {"id": "<bos>", "ids": [bos], "tokens": ["<bos>"]},
                                                  "<eos>": {"id": "<eos>", "ids": [eos], "tokens": ["<eos>"]}}},
            "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                                         {"type": "ByteFallback"}, {"type": "Fuse"}]},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                      "vocab": self.vocab, "merges": [[a, b] for a, b in self.merges]},
        }


# ---------------------------------------------------------------------------------------------
# The models


def rms_norm(x, weight, gemma):
    """Gemma3RMSNorm: (x · rsqrt(mean(x²) + eps)) · (1 + w); Qwen3RMSNorm: the same · w."""
    y = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + EPS)
    return y * (1.0 + weight.float()) if gemma else weight * y


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(theta, positions):
    inv_freq = 1.0 / (theta ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))
    freqs = positions[:, None].float() * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class Decoder:
    """Gemma3TextModel (gemma=True) or Qwen3Model, eval mode, on the tensors of `w`; with
    `layers` < LAYERS, output_hidden_states' hidden_states[layers] (no final norm: transformers
    applies it after the last layer only)."""

    def __init__(self, w, cfg, gemma, layers=None):
        self.w, self.cfg, self.gemma = w, cfg, gemma
        self.layers = LAYERS if layers is None else layers

    def mask(self, T, pad, sliding):
        """masking_utils' mask for one text: True where query q may attend to key kv."""
        q = torch.arange(T)[:, None]
        kv = torch.arange(T)[None, :]
        window = self.cfg.get("sliding_window") if sliding else None
        if self.gemma and self.cfg["use_bidirectional_attention"]:
            allowed = torch.ones(T, T, dtype=torch.bool)
            if window is not None:
                allowed = (kv <= q) & (kv > q - window) | ((q - kv).abs() < window)
        else:
            allowed = kv <= q
            if window is not None:
                allowed = allowed & (kv > q - window)
        return allowed & pad[None, :].bool()

    def forward(self, ids, attention_mask):
        w, c, g = self.w, self.cfg, self.gemma
        B, T = ids.shape
        x = torch.nn.functional.embedding(ids, w["embed_tokens.weight"])
        if g:
            x = x * torch.tensor(HIDDEN ** 0.5, dtype=torch.float32)
        positions = torch.arange(T)
        types = c["layer_types"]
        for i in range(self.layers):
            p = f"layers.{i}."
            sliding = types[i] == "sliding_attention"
            if g:
                theta = c["rope_local_base_freq"] if sliding else c["rope_theta"]
            else:
                theta = c["rope_theta"]
            cos, sin = rope(theta, positions)
            residual = x
            h = rms_norm(x, w[p + "input_layernorm.weight"], g)
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(B, T, HEADS, HEAD_DIM).transpose(1, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(B, T, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(B, T, KV_HEADS, HEAD_DIM).transpose(1, 2)
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], g)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], g)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)  # repeat_kv
            v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
            scaling = c["query_pre_attn_scalar"] ** -0.5 if g else HEAD_DIM ** -0.5
            scores = (q @ k.transpose(2, 3)) * scaling
            allowed = torch.stack([self.mask(T, attention_mask[b], sliding) for b in range(B)])
            scores = scores.masked_fill(~allowed[:, None], torch.finfo(torch.float32).min)
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
            attn = (probs @ v).transpose(1, 2).reshape(B, T, HEADS * HEAD_DIM)
            h = attn @ w[p + "self_attn.o_proj.weight"].T
            if g:
                h = rms_norm(h, w[p + "post_attention_layernorm.weight"], g)
            x = residual + h
            residual = x
            h = rms_norm(x, w[p + ("pre_feedforward_layernorm.weight" if g else "post_attention_layernorm.weight")], g)
            gate = h @ w[p + "mlp.gate_proj.weight"].T
            up = h @ w[p + "mlp.up_proj.weight"].T
            act = torch.nn.functional.gelu(gate, approximate="tanh") if g else torch.nn.functional.silu(gate)
            h = (act * up) @ w[p + "mlp.down_proj.weight"].T
            if g:
                h = rms_norm(h, w[p + "post_feedforward_layernorm.weight"], g)
            x = residual + h
        return rms_norm(x, w["norm.weight"], g) if self.layers == LAYERS else x


def bf16(t):
    return t.to(torch.bfloat16).to(torch.float32)


def decoder_weights(seed, vocab, gemma):
    gen = torch.Generator().manual_seed(seed)
    rnd = lambda *shape, std=0.15: bf16(torch.randn(*shape, generator=gen) * std)
    # Gemma's norms hold the offset from 1 (initialised to 0); Qwen3's the scale itself.
    norm = lambda n: rnd(n, std=0.1) if gemma else bf16(1.0 + torch.randn(n, generator=gen) * 0.1)
    w = {"embed_tokens.weight": rnd(vocab, HIDDEN, std=0.5 if not gemma else 0.1)}
    for i in range(LAYERS):
        p = f"layers.{i}."
        w[p + "input_layernorm.weight"] = norm(HIDDEN)
        w[p + "self_attn.q_proj.weight"] = rnd(HEADS * HEAD_DIM, HIDDEN)
        w[p + "self_attn.k_proj.weight"] = rnd(KV_HEADS * HEAD_DIM, HIDDEN)
        w[p + "self_attn.v_proj.weight"] = rnd(KV_HEADS * HEAD_DIM, HIDDEN)
        w[p + "self_attn.o_proj.weight"] = rnd(HIDDEN, HEADS * HEAD_DIM)
        w[p + "self_attn.q_norm.weight"] = norm(HEAD_DIM)
        w[p + "self_attn.k_norm.weight"] = norm(HEAD_DIM)
        w[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(HIDDEN)
            w[p + "post_feedforward_layernorm.weight"] = norm(HIDDEN)
        w[p + "mlp.gate_proj.weight"] = rnd(INTERMEDIATE, HIDDEN)
        w[p + "mlp.up_proj.weight"] = rnd(INTERMEDIATE, HIDDEN)
        w[p + "mlp.down_proj.weight"] = rnd(HIDDEN, INTERMEDIATE)
    w["norm.weight"] = norm(HIDDEN)
    return w


def gemma_config(vocab):
    return {
        "architectures": ["Gemma3TextModel"], "model_type": "gemma3_text", "torch_dtype": "bfloat16",
        "vocab_size": vocab, "hidden_size": HIDDEN, "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM, "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 256,
        "rms_norm_eps": EPS, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": None,
        "attention_bias": False, "attention_dropout": 0.0, "query_pre_attn_scalar": 24,
        "sliding_window": 8, "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
        "use_bidirectional_attention": True, "attn_logit_softcapping": None, "final_logit_softcapping": None,
        "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2, "tie_word_embeddings": True,
    }


def qwen_config(vocab):
    return {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "torch_dtype": "bfloat16",
        "vocab_size": vocab, "hidden_size": HIDDEN, "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM, "hidden_act": "silu", "max_position_embeddings": 256, "rms_norm_eps": EPS,
        "rope_theta": 1000000.0, "rope_scaling": None, "attention_bias": False, "attention_dropout": 0.0,
        "use_sliding_window": True, "sliding_window": 6, "max_window_layers": 1,
        "tie_word_embeddings": True, "bos_token_id": vocab - 3, "eos_token_id": vocab - 3,
    }


def qwen_layer_types(cfg):
    """Qwen3Config.__post_init__'s default layer_types."""
    window = cfg["sliding_window"] if cfg["use_sliding_window"] else None
    return ["sliding_attention" if window is not None and i >= cfg["max_window_layers"] else "full_attention"
            for i in range(LAYERS)]


# ---------------------------------------------------------------------------------------------
# sentence-transformers


def pad_batch(encoded, pad_id, left):
    width = max(len(e) for e in encoded)
    pad = lambda e: [pad_id] * (width - len(e))
    ids = torch.tensor([pad(e) + e if left else e + pad(e) for e in encoded])
    ones = lambda e: [1] * len(e)
    zeros = lambda e: [0] * (width - len(e))
    mask = torch.tensor([zeros(e) + ones(e) if left else ones(e) + zeros(e) for e in encoded])
    return ids, mask


def mean_pool(tokens, mask):
    expanded = mask.unsqueeze(-1).expand(tokens.size()).float()
    return torch.sum(tokens * expanded, 1) / torch.clamp(expanded.sum(1), min=1e-9)


def last_token_pool(tokens, mask):
    """Pooling.forward's lasttoken: the last 1 of the mask by flip and max (either padding side)."""
    seq_len = mask.shape[1]
    values, indices = mask.flip(1).max(1)
    indices = torch.where(values == 0, seq_len - 1, indices)
    gather = (seq_len - indices - 1).unsqueeze(-1).repeat(1, tokens.shape[2]).unsqueeze(1)
    expanded = mask.unsqueeze(-1).expand(tokens.size()).float()
    return torch.gather(tokens * expanded, 1, gather).squeeze(dim=1)


def embed(model, encoded, pad_id, left, pool, dense, dims=0):
    """The sentence embeddings; with `dims`, the first dims values L2-normalized again
    (SentenceTransformer's truncate_dim, then the unit vectors the classifiers compare)."""
    ids, mask = pad_batch(encoded, pad_id, left)
    with torch.no_grad():
        x = pool(model.forward(ids, mask), mask)
        for weight, bias, tanh in dense:
            x = x @ weight.T + (bias if bias is not None else 0.0)
            if tanh:
                x = torch.tanh(x)
        x = torch.nn.functional.normalize(x, p=2, dim=1)
        return torch.nn.functional.normalize(x[:, :dims], p=2, dim=1) if dims else x


def embeddings_checked(model, encoded, pad_id, left, pool, dense, dims=0):
    batch = embed(model, encoded, pad_id, left, pool, dense, dims)
    for i, e in enumerate(encoded):
        single = embed(model, [e], pad_id, left, pool, dense, dims)[0]
        assert (batch[i] - single).abs().max() < 1e-5, ("batch differs from the text alone", i)
    return batch


def prepared(text, prompt):
    """SentenceTransformer.encode prepends the prompt; Transformer.tokenize strips the whole."""
    return (prompt + text).strip()


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_common(d, tokenizer, cfg, weights, prompts, pooling_mode, extra_modules):
    d.mkdir(parents=True, exist_ok=True)
    write_json(d / "config.json", cfg)
    base.save_safetensors(d / "model.safetensors", weights, "BF16")
    (d / "tokenizer.json").write_text(json.dumps(tokenizer.json(), ensure_ascii=False) + "\n", encoding="utf-8")
    write_json(d / "sentence_bert_config.json", {"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False})
    write_json(d / "config_sentence_transformers.json",
               {"model_type": "SentenceTransformer", "prompts": prompts, "default_prompt_name": None,
                "similarity_fn_name": "cosine"})
    pooling = {"word_embedding_dimension": HIDDEN, "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": pooling_mode == "mean", "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
               "pooling_mode_lasttoken": pooling_mode == "lasttoken", "include_prompt": True}
    (d / "1_Pooling").mkdir(exist_ok=True)
    write_json(d / "1_Pooling" / "config.json", pooling)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    for path, kind in extra_modules:
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path,
                        "type": f"sentence_transformers.models.{kind}"})
    write_json(d / "modules.json", modules)


def variants(models, tok, pad_id, left, pool, dense):
    """Per variant (name, model, prompt[, dims]) its token ids and embeddings; a 2D Matryoshka
    variant also its layers and dimensions."""
    out = {}
    for name, model, prompt, *dims in models:
        encoded = [tok.encode(prepared(t, prompt)) for t in TEXTS]
        out[name] = {"prompt": prompt, "ids": encoded,
                     "embeddings": embeddings_checked(model, encoded, pad_id, left, pool, dense, *dims).tolist()}
        if dims:
            out[name].update(layers=model.layers, dimensions=dims[0])
    return out


def gemma_fixture(root):
    tok = GemmaTokenizer()
    vocab = len(tok.vocab)
    cfg = gemma_config(vocab)
    weights = decoder_weights(20260601, vocab, True)
    gen = torch.Generator().manual_seed(20260602)
    wide = 2 * HIDDEN
    dense_in = bf16(torch.randn(wide, HIDDEN, generator=gen) * 0.2)
    dense_out = bf16(torch.randn(HIDDEN, wide, generator=gen) * 0.2)
    dense_bias = bf16(torch.randn(HIDDEN, generator=gen) * 0.1)
    d = root / GEMMA
    write_common(d, tok, cfg, weights, GEMMA_PROMPTS, "mean",
                 [("2_Dense", "Dense"), ("3_Dense", "Dense"), ("4_Normalize", "Normalize")])
    for path, (w, b, act) in {"2_Dense": (dense_in, None, "torch.nn.modules.linear.Identity"),
                             "3_Dense": (dense_out, dense_bias, "torch.nn.modules.activation.Tanh")}.items():
        (d / path).mkdir(exist_ok=True)
        write_json(d / path / "config.json", {"in_features": w.shape[1], "out_features": w.shape[0],
                                              "bias": b is not None, "activation_function": act})
        tensors = {"linear.weight": w}
        if b is not None:
            tensors["linear.bias"] = b
        base.save_safetensors(d / path / "model.safetensors", tensors, "BF16")
    dense = [(dense_in, None, False), (dense_out, dense_bias, True)]
    model = Decoder(weights, cfg, True)
    causal = Decoder(weights, dict(cfg, use_bidirectional_attention=False), True)
    cut = Decoder(weights, cfg, True, layers=2)
    # Pooling's include_prompt false: attention_mask[:, :prompt_length] = 0 before pooling, the
    # length from SentenceTransformer._get_prompt_length (the stripped prompt tokenized alone, less
    # the <eos> its post-processor appends; Gemma's tokenizer pads on the right).
    prompt_length = len(tok.encode(GEMMA_PROMPTS["query"].strip())) - 1

    def without_prompt(tokens, mask):
        mask = mask.clone()
        mask[:, :prompt_length] = 0
        return mean_pool(tokens, mask)

    out = variants([("query_without_prompt", model, GEMMA_PROMPTS["query"])], tok, 0, False, without_prompt, dense)
    return out | variants([("plain", model, ""), ("query", model, GEMMA_PROMPTS["query"]), ("causal", causal, ""),
                     ("layers2_dims16", cut, "", 16)],
                    tok, 0, False, mean_pool, dense)


def qwen_fixture(root):
    tok = QwenTokenizer()
    vocab = len(tok.vocab)
    cfg = qwen_config(vocab)
    weights = decoder_weights(20260603, vocab, False)
    write_common(root / QWEN, tok, cfg, weights, QWEN_PROMPTS, "lasttoken", [("2_Normalize", "Normalize")])
    model = Decoder(weights, dict(cfg, layer_types=qwen_layer_types(cfg)), False)
    cut = Decoder(weights, dict(cfg, layer_types=qwen_layer_types(cfg)), False, layers=2)
    return variants([("plain", model, ""), ("query", model, QWEN_PROMPTS["query"]), ("layers2_dims16", cut, "", 16)],
                    tok, tok.vocab["<|endoftext|>"], True, last_token_pool, [])


def main():
    root = base.output_dir()
    torch.set_num_threads(1)
    reference = {"texts": TEXTS, "max_seq_length": MAX_SEQ_LENGTH,
                 GEMMA: gemma_fixture(root), QWEN: qwen_fixture(root)}
    (root / "decoder-sentence-reference.json").write_text(json.dumps(reference) + "\n", encoding="utf-8")
    for name in (GEMMA, QWEN):
        print(name, "tokens per text:", [len(i) for i in reference[name]["plain"]["ids"]])


if __name__ == "__main__":
    main()
