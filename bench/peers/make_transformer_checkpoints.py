#!/usr/bin/python3
"""Random-weight checkpoints at the real sizes of BERT-base and ModernBERT-base, and the same
reference models exported to ONNX, for bench/transformer_peer.py (issue 31, "Speed and memory").

The models, checkpoint layout, tokenizer.json and weight initialisation are those of the test
fixtures' generators (tests/transformers/make_fixtures.py, make_modernbert_fixtures.py: PyTorch
modules written from the published modeling code); only their module-level sizes are set here:

  bert        BertForSequenceClassification: hidden 768, 12 layers, 12 heads, intermediate 3072,
              vocab 30522, max_position_embeddings 512
  modernbert  ModernBertForSequenceClassification (ModernBERT-base): hidden 768, 22 layers,
              12 heads, intermediate 1152, vocab 50368, local_attention 128, global attention
              every 3rd layer, global RoPE theta 160000, local 10000, no biases, CLS pooling

The fixtures' WordPiece vocabulary is padded with filler words to the real vocabulary size, so
the embedding tables have their real shapes. Each model directory gets model.onnx (input_ids,
attention_mask int64[batch, tokens] -> logits float[batch, 3]; opset 14, dynamic batch and
token axes, torch.onnx.export of the same module that wrote the safetensors).

--tiny makes the fixtures' own small sizes (2-4 layers, hidden 64: bench/smoke.sh's seconds).
Prints one JSON document: for each model its directory, weights' bytes, the token ids and text of
inputs of exactly --lengths tokens and of a few check texts, and the reference's logits on them.

usage: /usr/bin/python3 bench/peers/make_transformer_checkpoints.py --out DIR [--tiny]
                                                                    [--lengths 32,128]"""
import argparse
import json
import os
import pathlib
import sys
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "transformers"))
import make_fixtures as bert_fixtures  # noqa: E402
import make_modernbert_fixtures as modernbert_fixtures  # noqa: E402

OPSET = 14  # torch 1.13's exporter; no `onnx` package needed
CHECK_TEXTS = [3, 7, 16]  # indices into make_fixtures.TEXTS

SIZES = {
    "bert": dict(hidden=768, layers=12, heads=12, intermediate=3072, vocab=30522, max_positions=512),
    "modernbert": dict(hidden=768, layers=22, heads=12, intermediate=1152, vocab=50368,
                       max_positions=8192, local_attention=128, global_every=3),
}
TINY = {
    "bert": dict(hidden=64, layers=2, heads=4, intermediate=128, vocab=None, max_positions=512),
    "modernbert": dict(hidden=64, layers=4, heads=4, intermediate=96, vocab=None,
                       max_positions=8192, local_attention=8, global_every=2),
}


def sized_vocabulary(size):
    """The fixtures' WordPiece vocabulary, padded with filler words ("fill123") to `size`."""
    vocab = bert_fixtures.vocabulary(bert_fixtures.SPECIALS_BERT)
    if size is None:
        return vocab
    words = list(bert_fixtures.WORDS)
    words += [f"fill{i}" for i in range(size - len(vocab))]
    vocab = bert_fixtures.vocabulary(bert_fixtures.SPECIALS_BERT, words)
    assert len(vocab) == size, (len(vocab), size)
    return vocab


def text_of(tokens):
    """A text the fixtures' WordPiece gives exactly `tokens` ids ([CLS] words [SEP]): one token
    per vocabulary word."""
    words = [w for w in bert_fixtures.WORDS if len(w) > 1]
    return " ".join(words[i % len(words)] for i in range(tokens - 2))


def make_bert(out, size):
    f = bert_fixtures
    f.HIDDEN, f.LAYERS, f.HEADS = size["hidden"], size["layers"], size["heads"]
    f.INTERMEDIATE, f.MAX_POSITIONS = size["intermediate"], size["max_positions"]
    f.OUT = out
    vocab = sized_vocabulary(size["vocab"])
    model = f.SequenceClassifier(len(vocab), False, vocab["[PAD]"]).eval()
    f.randomise(model, 31)
    f.write_fixture("bert", vocab, f.SPECIALS_BERT, False, model, "F32")
    return out / "bert", vocab, model, f.MAX_POSITIONS


def make_modernbert(out, size):
    f = modernbert_fixtures
    f.HIDDEN, f.HEADS, f.INTERMEDIATE = size["hidden"], size["heads"], size["intermediate"]
    f.HEAD_DIM, f.MAX_POSITIONS = size["hidden"] // size["heads"], size["max_positions"]
    spec = dict(layers=size["layers"], global_every=size["global_every"],
                local_attention=size["local_attention"], global_theta=160000.0,
                local_theta=10000.0, bias=False, pooling="cls", rope_scaling=None, seed=41)
    vocab = sized_vocabulary(size["vocab"])
    model = f.SequenceClassifier(len(vocab), spec).eval()
    f.randomise(model, spec["seed"])
    f.write_fixture(out, "modernbert", vocab, vocab["[PAD]"], spec, model, "F32")
    return out / "modernbert", vocab, model, f.MAX_POSITIONS


def export_onnx(model, path):
    # torch 1.13's exporter has no symbolic for logical_not (the ModernBERT reference's window mask)
    torch.onnx.register_custom_op_symbolic("aten::logical_not", lambda g, x: g.op("Not", x), OPSET)
    ids = torch.tensor([[2, 60, 61, 62, 3], [2, 60, 3, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "logits": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), str(path), input_names=["input_ids", "attention_mask"],
                          output_names=["logits"], dynamic_axes=axes, opset_version=OPSET,
                          do_constant_folding=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--lengths", default="32,128")
    ap.add_argument("--only", default="bert,modernbert")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    warnings.filterwarnings("ignore")  # the exporter's tracer notes
    lengths = [int(n) for n in args.lengths.split(",")]
    sizes = TINY if args.tiny else SIZES
    doc = {"opset": OPSET, "torch": torch.__version__, "tiny": args.tiny, "models": {}}
    for name, make in (("bert", make_bert), ("modernbert", make_modernbert)):
        if name not in args.only.split(","):
            continue
        directory, vocab, model, max_positions = make(out, sizes[name])
        export_onnx(model, directory / "model.onnx")
        texts = {str(n): text_of(n) for n in lengths}
        texts.update({f"check{i}": bert_fixtures.TEXTS[i] for i in CHECK_TEXTS})
        inputs = {}
        for key, text in texts.items():
            ids = bert_fixtures.encode(text, vocab, bert_fixtures.SPECIALS_BERT, max_positions)
            if key.isdigit():
                assert len(ids) == int(key), (key, len(ids))
            inputs[key] = {"text": text, "ids": ids,
                           "logits": bert_fixtures.run(model, [ids], vocab["[PAD]"])[0].tolist()}
        weights = directory / "model.safetensors"
        doc["models"][name] = {"dir": str(directory), "onnx": str(directory / "model.onnx"),
                               "size": sizes[name], "labels": bert_fixtures.LABELS,
                               "parameters": sum(p.numel() for p in model.parameters()),
                               "weights_bytes": weights.stat().st_size,
                               "onnx_bytes": (directory / "model.onnx").stat().st_size,
                               "inputs": inputs}
        print(f"made {name}: {doc['models'][name]['parameters']} parameters, "
              f"{weights.stat().st_size / 2**20:.0f} MiB", file=sys.stderr, flush=True)
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
