#!/usr/bin/env bash
# The committed fixtures are what make_fixtures.py, make_modernbert_fixtures.py,
# make_lora_fixtures.py, make_token_fixtures.py, make_sentence_fixtures.py and
# make_deberta_fixtures.py, make_pair_fixtures.py and make_decoder_fixtures.py write: regenerate them in a temporary
# directory and compare. Checkpoints, configs and tokenizers byte for byte; the reference logits
# within 1e-5 + 1e-6 |value|, since PyTorch's float32 kernels may round differently on another
# CPU (AVX2 vs AVX-512; seen: 1.05e-5 on a logit of 4.8 on a KVM guest of an Emerald Rapids
# without AMX) while the weights, drawn from a seeded generator, do not change. Exit 77
# (skipped) without Debian's python3-torch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch is not installed"; exit 77; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$here/make_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_modernbert_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_lora_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_token_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_sentence_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_deberta_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_pair_fixtures.py" --out "$out"
/usr/bin/python3 "$here/make_decoder_fixtures.py" --out "$out"
diff -r -x '*reference.json' "$here/fixtures" "$out"
# Every reference: the same texts, ids (and for token classification the same windows and
# spans: labels, offsets, words), logits, scores and sentence embeddings within that bound.
/usr/bin/python3 - "$here/fixtures" "$out" reference.json modernbert-reference.json \
    lora_reference.json token_reference.json roberta-token-reference.json \
    modernbert-token-reference.json mmbert-token-reference.json sentence_reference.json \
    mmbert-sentence-reference.json deberta-reference.json pair-reference.json \
    decoder-sentence-reference.json <<'PY'
import json, sys
worst, worst_at, excess = 0.0, 0.0, 0.0


def close(a, b):
    # Within 1e-5, plus 1e-6 of the value (a few float32 units in the last place: a logit of 12
    # summed in another order differs by more than 1e-5 absolute without being any less exact).
    global worst, worst_at, excess
    for x, y in zip(a, b, strict=True):
        if abs(x - y) > worst:
            worst, worst_at = abs(x - y), x
        excess = max(excess, abs(x - y) / (1e-5 + 1e-6 * max(abs(x), abs(y))))


def sequence(committed, made, file):
    assert committed["texts"] == made["texts"] and committed["labels"] == made["labels"], file
    assert committed["models"].keys() == made["models"].keys(), file
    for name, model in committed["models"].items():
        other = made["models"][name]
        assert model["ids"] == other["ids"] and model.get("max_tokens") == other.get("max_tokens"), name
        for row, other_row in zip(model["logits"], other["logits"], strict=True):
            close(row, other_row)
    if "reranker" in committed:  # pair-reference.json's cross-encoder
        a, b = committed["reranker"], made["reranker"]
        assert a["documents"] == b["documents"], file
        for qa, qb in zip(a["queries"], b["queries"], strict=True):
            assert qa["query"] == qb["query"], file
            close(qa["logits"], qb["logits"])
            close(qa["scores"], qb["scores"])


def token(committed, made, file):
    for key in ("labels", "max_length", "stride"):
        assert committed[key] == made[key], (file, key)
    for a, b in zip(committed["texts"], made["texts"], strict=True):
        assert a["text"] == b["text"], (file, "texts differ")
        for wa, wb in zip(a["windows"], b["windows"], strict=True):
            assert (wa["ids"], wa["tokens"], wa["offsets"]) == (wb["ids"], wb["tokens"], wb["offsets"]), file
            for ra, rb in zip(wa["logits"], wb["logits"], strict=True):
                close(ra, rb)
        for strategy, spans in a["spans"].items():
            for sa, sb in zip(spans, b["spans"][strategy], strict=True):
                close([sa.pop("score")], [sb.pop("score")])
                assert sa == sb, (file, strategy, sa, sb)


def sentence(committed, made, file):
    assert committed["texts"] == made["texts"] and committed["ids"] == made["ids"], file
    for group in ("variants", "matryoshka"):
        assert committed[group].keys() == made[group].keys(), (file, group)
        for name, variant in committed[group].items():
            for row, other in zip(variant["embeddings"], made[group][name]["embeddings"], strict=True):
                close(row, other)


def decoder(committed, made, file):
    assert committed["texts"] == made["texts"], file
    for fixture in ("gemma3-sentence", "qwen3-sentence"):
        assert committed[fixture].keys() == made[fixture].keys(), (file, fixture)
        for name, variant in committed[fixture].items():
            other = made[fixture][name]
            assert variant["ids"] == other["ids"] and variant["prompt"] == other["prompt"], (file, name)
            for row, other_row in zip(variant["embeddings"], other["embeddings"], strict=True):
                close(row, other_row)


for file in sys.argv[3:]:
    committed, made = (json.load(open(f"{d}/{file}", encoding="utf-8")) for d in sys.argv[1:3])
    if "gemma3-sentence" in committed:
        decoder(committed, made, file)
    elif "variants" in committed:
        sentence(committed, made, file)
    else:
        (token if isinstance(committed["texts"][0], dict) else sequence)(committed, made, file)
print(f"reference logits, scores and embeddings: max abs difference {worst:.3g} (at {worst_at:.4g}),"
      f" {excess:.2f} of the bound 1e-5 + 1e-6 |value|")
sys.exit(0 if excess <= 1 else 1)
PY
echo "the fixtures reproduce"
