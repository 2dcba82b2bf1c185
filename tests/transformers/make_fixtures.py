#!/usr/bin/env python3
"""Writes the transformer fixtures of tests/transformers/fixtures and their PyTorch reference.

Each fixture is a checkpoint directory exactly as Hugging Face publishes one (config.json,
model.safetensors, tokenizer.json, tokenizer_config.json) with random weights at small shapes:

  bert-f32      BertForSequenceClassification, float32 tensors
  bert-bf16     the same weights rounded to bfloat16 (BF16 tensors)
  roberta-f32   RobertaForSequenceClassification (positions from pad_token_id + 1, the
                classifier.dense / classifier.out_proj head), float32

reference.json holds the texts, the token ids this script's WordPiece gives them and the
logits of the reference model below, run on one padded batch of all texts (and checked against
the texts one by one). The reference is written from transformers' modeling_bert.py and
modeling_roberta.py (eval mode, absolute positions, post-norm, exact GELU, additive attention
mask of finfo.min), not taken from that package, which is not installed here.

usage: /usr/bin/python3 tests/transformers/make_fixtures.py [--out DIR]   (Debian's python3-torch)
The output is byte-for-byte the same on every run (seeded; ctest transformers.fixtures_reproduce
checks the committed files against a fresh run).
"""
import argparse
import json
import math
import pathlib
import struct
import unicodedata

import torch

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "fixtures"
HIDDEN, LAYERS, HEADS, INTERMEDIATE, MAX_POSITIONS = 64, 2, 4, 128, 64
LABELS = ["code", "math", "chat"]

SPECIALS_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SPECIALS_ROBERTA = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
WORDS = """the a an of to and in is it for on with that this what how why can you i me my
please write code function python rust java sql query table bug error fix compile test
solve equation integral derivative sum prove number prime matrix vector math algebra
hello hi thanks good morning weather today tell joke story about love music movie
explain difference between list array sort fast slow memory thread lock server client
http request json parse file read open close run build deploy cloud model train data
cafe price cost buy sell big small new old time day year one two three x y z""".split()
SUFFIXES = ["ing", "ed", "s", "ly", "er", "tion", "al", "es"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]

TEXTS = [
    "",
    "hi",
    "hello!",
    "write a python function to sort a list",
    "solve the equation x + 2 = 5",
    "what is the integral of x squared?",
    "tell me a joke about cats",
    "How do I fix this SQL query error: table not found",
    "prove that there are infinitely many primes",
    "good morning, what's the weather today?",
    "Café prices: how much does a coffee cost?",
    "explain the difference between a thread and a lock in java",
    "compile, test, build, deploy: the server keeps crashing on http requests",
    "derivative of sin(x) * cos(x) at x = 0",
    "thanks!!!",
    "zzzqqq unknownword xylophone",
    "matrix vector multiplication is slow in my rust code, please help me make it fast",
    "one two three " * 12,
    "I love this movie and its music, tell me a story about it",
    "parse a json file, read the data, train a model and run it in the cloud " * 3,
]


def vocabulary(specials, words=WORDS):
    vocab = list(specials) + PUNCT + LETTERS + ["##" + c for c in LETTERS] + words
    vocab += ["##" + s for s in SUFFIXES]
    seen, out = set(), []
    for v in vocab:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return {v: i for i, v in enumerate(out)}


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def basic_tokens(text):
    """BertNormalizer (lowercase, strip accents) then BertPreTokenizer, for the texts above."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words = []
    for chunk in text.split():
        current = ""
        for ch in chunk:
            if is_punct(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


def wordpiece(word, vocab, unk):
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = ("##" if start > 0 else "") + word[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return [vocab[unk]]
        pieces.append(vocab[found])
        start = end
    return pieces


def encode(text, vocab, specials, max_tokens):
    cls, sep, unk = ("[CLS]", "[SEP]", "[UNK]") if specials[0] == "[PAD]" else ("<s>", "</s>", "<unk>")
    ids = []
    for w in basic_tokens(text):
        ids += wordpiece(w, vocab, unk)
    ids = ids[: max_tokens - 2]
    return [vocab[cls]] + ids + [vocab[sep]]


def tokenizer_json(vocab, specials, roberta):
    cls, sep, unk = ("<s>", "</s>", "<unk>") if roberta else ("[CLS]", "[SEP]", "[UNK]")
    added = [
        {"id": vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for s in specials
    ]
    template = [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": sep, "type_id": 0}}]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing", "single": template,
            "pair": template + [{"Sequence": {"id": "B", "type_id": 1}},
                                {"SpecialToken": {"id": sep, "type_id": 1}}],
            "special_tokens": {cls: {"id": cls, "ids": [vocab[cls]], "tokens": [cls]},
                               sep: {"id": sep, "ids": [vocab[sep]], "tokens": [sep]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }


# --- the reference model, from modeling_bert.py / modeling_roberta.py --------------------------

class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.query = torch.nn.Linear(HIDDEN, HIDDEN)
        self.key = torch.nn.Linear(HIDDEN, HIDDEN)
        self.value = torch.nn.Linear(HIDDEN, HIDDEN)
        self.attention_dense = torch.nn.Linear(HIDDEN, HIDDEN)
        self.attention_norm = torch.nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = torch.nn.Linear(HIDDEN, INTERMEDIATE)
        self.output = torch.nn.Linear(INTERMEDIATE, HIDDEN)
        self.output_norm = torch.nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, extended_mask):
        b, t, _ = x.shape
        dh = HIDDEN // HEADS

        def heads(y):
            return y.view(b, t, HEADS, dh).permute(0, 2, 1, 3)

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh) + extended_mask
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.permute(0, 2, 1, 3).reshape(b, t, HIDDEN)
        x = self.attention_norm(self.attention_dense(context) + x)
        inner = torch.nn.functional.gelu(self.intermediate(x))  # exact erf GELU ("gelu")
        return self.output_norm(self.output(inner) + x)


def hidden_states(model, ids, mask, types=None):
    """BertModel / RobertaModel without a pooler: every token's final hidden state. `model` has
    the encoder's modules (word, position, token_type, embedding_norm, layers) and roberta,
    pad_id. `types`: token_type_ids (default zeros)."""
    if model.roberta:  # create_position_ids_from_input_ids
        not_pad = ids.ne(model.pad_id).int()
        positions = (torch.cumsum(not_pad, dim=1) * not_pad).long() + model.pad_id
    else:
        positions = torch.arange(ids.shape[1]).unsqueeze(0).expand_as(ids)
    types = torch.zeros_like(ids) if types is None else types
    x = model.word(ids) + model.token_type(types) + model.position(positions)
    x = model.embedding_norm(x)
    extended = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    for layer in model.layers:
        x = layer(x, extended)
    return x


def encoder_tensors(model, p):
    """The encoder's tensors of `model` (as hidden_states) under a published checkpoint's names,
    `p` being "bert." or "roberta."."""
    out = {
        p + "embeddings.word_embeddings.weight": model.word.weight,
        p + "embeddings.position_embeddings.weight": model.position.weight,
        p + "embeddings.token_type_embeddings.weight": model.token_type.weight,
        p + "embeddings.LayerNorm.weight": model.embedding_norm.weight,
        p + "embeddings.LayerNorm.bias": model.embedding_norm.bias,
    }
    for i, layer in enumerate(model.layers):
        l = f"{p}encoder.layer.{i}."
        for name, module in [("attention.self.query", layer.query),
                             ("attention.self.key", layer.key),
                             ("attention.self.value", layer.value),
                             ("attention.output.dense", layer.attention_dense),
                             ("attention.output.LayerNorm", layer.attention_norm),
                             ("intermediate.dense", layer.intermediate),
                             ("output.dense", layer.output),
                             ("output.LayerNorm", layer.output_norm)]:
            out[l + name + ".weight"] = module.weight
            out[l + name + ".bias"] = module.bias
    return out


class SequenceClassifier(torch.nn.Module):
    def __init__(self, vocab_size, roberta, pad_id):
        super().__init__()
        self.roberta, self.pad_id = roberta, pad_id
        self.word = torch.nn.Embedding(vocab_size, HIDDEN)
        self.position = torch.nn.Embedding(MAX_POSITIONS, HIDDEN)
        self.token_type = torch.nn.Embedding(1 if roberta else 2, HIDDEN)
        self.embedding_norm = torch.nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = torch.nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.pooler = torch.nn.Linear(HIDDEN, HIDDEN)  # bert.pooler.dense / classifier.dense
        self.head = torch.nn.Linear(HIDDEN, len(LABELS))  # classifier / classifier.out_proj

    def forward(self, ids, mask, types=None):
        return self.head(torch.tanh(self.pooler(hidden_states(self, ids, mask, types)[:, 0])))

    def tensors(self):
        """The state dict under the names a published checkpoint uses."""
        p = "roberta." if self.roberta else "bert."
        out = encoder_tensors(self, p)
        pooler, head = ("classifier.dense", "classifier.out_proj") if self.roberta else (
            p + "pooler.dense", "classifier")
        out[pooler + ".weight"], out[pooler + ".bias"] = self.pooler.weight, self.pooler.bias
        out[head + ".weight"], out[head + ".bias"] = self.head.weight, self.head.bias
        return out


def randomise(model, seed):
    """Weights large enough that logits spread over a few units (std 0.02 would make every
    text's probabilities nearly uniform and any comparison trivially close)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            if "norm" in name:
                t.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(t.shape, generator=g))
            elif t.dim() == 2 and ("word" in name or "position" in name or "token_type" in name):
                t.copy_(torch.randn(t.shape, generator=g))
            elif t.dim() == 2:
                t.copy_(torch.randn(t.shape, generator=g) * (1.5 / math.sqrt(t.shape[1])))
            else:
                t.copy_(0.1 * torch.randn(t.shape, generator=g))
        model.head.weight.mul_(3.0)


def save_safetensors(path, tensors, dtype):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        if dtype == "BF16":
            raw = t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        else:
            raw = t.to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def config(vocab, roberta, pad_id):
    c = {
        "architectures": ["RobertaForSequenceClassification" if roberta else "BertForSequenceClassification"],
        "model_type": "roberta" if roberta else "bert",
        "vocab_size": len(vocab), "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "intermediate_size": INTERMEDIATE, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": MAX_POSITIONS, "type_vocab_size": 1 if roberta else 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": pad_id,
        "position_embedding_type": "absolute", "problem_type": "single_label_classification",
        "id2label": {str(i): l for i, l in enumerate(LABELS)},
        "label2id": {l: i for i, l in enumerate(LABELS)},
        "torch_dtype": "float32", "transformers_version": "4.46.0",
    }
    if roberta:
        c.update({"bos_token_id": 0, "eos_token_id": 2})
    return c


def run(model, encoded, pad_id):
    width = max(len(e) for e in encoded)
    ids = torch.tensor([e + [pad_id] * (width - len(e)) for e in encoded])
    mask = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in encoded])
    with torch.no_grad():
        return model(ids, mask)


def write_fixture(name, vocab, specials, roberta, model, dtype):
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    pad_id = vocab[specials[1] if roberta else specials[0]]
    (d / "config.json").write_text(json.dumps(config(vocab, roberta, pad_id), indent=2) + "\n")
    (d / "tokenizer.json").write_text(json.dumps(tokenizer_json(vocab, specials, roberta)) + "\n")
    tc = {"do_lower_case": True, "model_max_length": MAX_POSITIONS - (pad_id + 1 if roberta else 0),
          "tokenizer_class": "BertTokenizer"}
    (d / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")
    save_safetensors(d / "model.safetensors", model.tensors(), dtype)


def output_dir():
    """--out DIR (default: the committed fixtures), with PyTorch on one thread so that every run
    sums in the same order."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(OUT))
    torch.set_num_threads(1)
    return pathlib.Path(parser.parse_args().out)


def main():
    global OUT
    OUT = output_dir()
    reference = {"texts": TEXTS, "labels": LABELS, "models": {}}
    for name, roberta, seed in [("bert", False, 31), ("roberta", True, 32)]:
        specials = SPECIALS_ROBERTA if roberta else SPECIALS_BERT
        vocab = vocabulary(specials)
        pad_id = vocab[specials[1] if roberta else specials[0]]
        model = SequenceClassifier(len(vocab), roberta, pad_id).eval()
        randomise(model, seed)
        max_tokens = MAX_POSITIONS - (pad_id + 1 if roberta else 0)
        encoded = [encode(t, vocab, specials, max_tokens) for t in TEXTS]
        batch = run(model, encoded, pad_id)
        single = torch.cat([run(model, [e], pad_id) for e in encoded])
        assert (batch - single).abs().max() < 1e-5, "reference: batch differs from one by one"
        reference["models"][name] = {"max_tokens": max_tokens, "ids": encoded, "logits": batch.tolist()}
        write_fixture(name + "-f32", vocab, specials, roberta, model, "F32")
        print(f"{name}: {len(vocab)} tokens, |logit| max {batch.abs().max():.2f}, "
              f"argmax counts {torch.bincount(batch.argmax(1), minlength=len(LABELS)).tolist()}")
        if not roberta:
            rounded = SequenceClassifier(len(vocab), roberta, pad_id).eval()
            rounded.load_state_dict(model.state_dict())
            with torch.no_grad():
                for t in rounded.parameters():
                    t.copy_(t.to(torch.bfloat16).to(torch.float32))
            low = run(rounded, encoded, pad_id)
            gap = (torch.softmax(low, 1) - torch.softmax(batch, 1)).abs().max().item()
            assert torch.equal(low.argmax(1), batch.argmax(1)) and gap < 0.02, gap
            print(f"{name} bf16 weights: probabilities within {gap:.4f} of float32")
            write_fixture(name + "-bf16", vocab, specials, roberta, model, "BF16")
    (OUT / "reference.json").write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
