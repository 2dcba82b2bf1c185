#!/usr/bin/python3
"""Trains a small BertForSequenceClassification from scratch on the repository's labelled router
queries and writes it in the published checkpoint layout (issue 46, "How it is checked": bf16 and
int8 are judged on a real trained model, not on random weights).

Task: the 8 router groups (models/data/README.md: math, science, computer science, history, law,
business, health, other) of models/data/router_queries.jsonl.gz — StackExchange titles, MedQuAD
health questions, CLINC150 and Banking77 requests. Train rows: the source's *train* split, at most
--cap per group, picked by a hash of the text (as models/training-mix.py picks, so every machine
trains on the same rows). Held out: every *test* row of the source's split (7,116 rows), never
trained on; written to heldout.jsonl beside the checkpoint for bench/accuracy/precision_accuracy.py.

Tokenizer: a WordPiece vocabulary made from the train rows, deterministically: the specials,
punctuation and every character seen at least 3 times (alone and as ##continuation), then the
most frequent whole words, then the most frequent word starts and ##continuations (2-6
characters) of the words left out, ties broken by the string. Texts are split as BertNormalizer
(lowercase, accents stripped, control characters dropped, CJK characters apart) and
BertPreTokenizer do, then greedy longest-match WordPiece: tests/transformers/make_fixtures.py's
encode(), whose tokenizer.json mcpclass reads.

Model: make_fixtures.py's PyTorch reference module (written from transformers' modeling_bert.py;
imported, its module-level sizes set here as bench/peers/make_transformer_checkpoints.py does), so
the state dict has the published names: config.json (architectures, id2label, ...),
model.safetensors (float32), tokenizer.json, vocab.txt and tokenizer_config.json, plus model.onnx
(the same module exported by make_transformer_checkpoints.export_onnx: input_ids,
attention_mask -> logits) for the ONNX Runtime peers. The reference module has no dropout (it is
written for eval); weight decay and two epochs keep it from overfitting much.

Fixed seed; PyTorch on --threads threads (1: on a 2-core machine shared with builds, two
OpenMP threads ran a step 4× slower than one). The output directory carries training.json with a
key over the data, the reference module, the settings and FORMAT: a rerun with the same key
prints the directory at once, a different key trains again.

usage: /usr/bin/python3 bench/accuracy/train_bert_classifier.py --out DIR [--tiny] [--force]
  --tiny: hidden 64, 2 layers, 200 rows per group, 3 epochs (seconds, for bench/smoke.sh)."""
import argparse
import collections
import gzip
import hashlib
import json
import math
import os
import pathlib
import shutil
import sys
import tempfile
import time
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "models" / "data" / "router_queries.jsonl.gz"
FORMAT = "mcpclass-accuracy-bert-1"  # bump when the training or the written files change
SEED = 46

# The router groups of models/data/README.md (mcpclass eval --groups router8).
GROUPS = {"math": "math", "physics": "science", "chemistry": "science", "biology": "science",
          "engineering": "science", "computer science": "computer science", "history": "history",
          "law": "law", "business": "business", "economics": "business", "health": "health",
          "psychology": "other", "philosophy": "other", "other": "other"}
LABELS = ["math", "science", "computer science", "history", "law", "business", "health", "other"]

SIZES = {
    "small": dict(hidden=256, layers=4, heads=4, intermediate=1024, max_tokens=64, vocab=6000,
                  cap=2000, epochs=2, batch=32, lr=5e-4),
    "tiny": dict(hidden=64, layers=2, heads=4, intermediate=128, max_tokens=64, vocab=800,
                 cap=200, epochs=3, batch=32, lr=2e-3),
}


def log(*args):
    print("train_bert_classifier:", *args, file=sys.stderr, flush=True)


def text_hash(text):
    return hashlib.sha256(text.encode()).hexdigest()


def rows(cap):
    """(train, heldout): lists of {text, label, source}. Train: each group's train rows in hash
    order, the first `cap`; held out: every test row, in file order."""
    train, heldout = collections.defaultdict(list), []
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            row = {"text": r["text"], "label": GROUPS[r["category"]], "source": r["source"]}
            if r["split"] == "test":
                heldout.append(row)
            else:
                train[row["label"]].append(row)
    picked = []
    for label in LABELS:
        picked += sorted(train[label], key=lambda r: text_hash(r["text"]))[:cap]
    return picked, heldout


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or
            0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or
            0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def clean(text):
    """What BertNormalizer's clean_text and handle_chinese_chars do before make_fixtures'
    basic_tokens (which covers lowercasing, accents and punctuation): control characters and
    U+FFFD dropped, whitespace made a space, CJK characters made words of their own."""
    out = []
    for ch in text:
        cp = ord(ch)
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif cp == 0 or cp == 0xFFFD or unicodedata.category(ch) in ("Cc", "Cf"):
            continue
        elif is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


def make_vocabulary(fixtures, texts, size):
    """The WordPiece vocabulary of the module docstring, as make_fixtures.vocabulary() lays it
    out (specials, punctuation, a-z 0-9 and their ## forms first)."""
    words = collections.Counter()
    for t in texts:
        words.update(fixtures.basic_tokens(clean(t)))
    chars = collections.Counter()
    for w, n in words.items():
        for ch in w:
            chars[ch] += n
    base = fixtures.vocabulary(fixtures.SPECIALS_BERT, [])
    ranked = lambda counter: sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    extra = []
    for ch, n in ranked(chars):
        if n >= 3 and ch not in base:
            extra += [ch, "##" + ch]
    budget = size - len(base) - len(extra)
    whole = [w for w, n in ranked(words) if n >= 2 and len(w) > 1 and w not in base]
    whole = whole[: budget * 2 // 3]
    kept = set(whole)
    pieces = collections.Counter()
    for w, n in words.items():
        if w in kept or len(w) < 3:
            continue
        for k in range(2, min(6, len(w) - 1) + 1):
            pieces[w[:k]] += n
        for i in range(1, len(w) - 1):
            for k in range(2, 7):
                if i + k <= len(w):
                    pieces["##" + w[i:i + k]] += n
    taken = set(base) | set(extra) | kept
    sub = [p for p, n in ranked(pieces) if n >= 2 and p not in taken][: budget - len(whole)]
    return fixtures.vocabulary(fixtures.SPECIALS_BERT, extra + whole + sub)


def initialise(model, seed):
    """BERT's initialisation (initializer_range 0.02): normal weights, zero biases, unit norms."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            if "norm" in name:
                t.fill_(1.0 if name.endswith("weight") else 0.0)
            elif t.dim() == 2:
                t.copy_(0.02 * torch.randn(t.shape, generator=g))
            else:
                t.zero_()


def batches(encoded, labels, batch, pad_id, generator):
    """Shuffled batches of similar lengths (chunks of 50 batches sorted by length), padded."""
    import torch
    order = torch.randperm(len(encoded), generator=generator).tolist()
    chunk = batch * 50
    out = []
    for s in range(0, len(order), chunk):
        part = sorted(order[s:s + chunk], key=lambda i: len(encoded[i]))
        out += [part[k:k + batch] for k in range(0, len(part), batch)]
    for j in torch.randperm(len(out), generator=generator).tolist():
        idx = out[j]
        width = max(len(encoded[i]) for i in idx)
        ids = torch.tensor([encoded[i] + [pad_id] * (width - len(encoded[i])) for i in idx])
        mask = torch.tensor([[1] * len(encoded[i]) + [0] * (width - len(encoded[i])) for i in idx])
        yield ids, mask, torch.tensor([labels[i] for i in idx])


def predict(run, model, encoded, pad_id, batch=64):
    """Softmax probabilities of every encoded text, batched by length (make_fixtures.run pads)."""
    import torch
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    probs = [None] * len(encoded)
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        p = torch.softmax(run(model, [encoded[i] for i in idx], pad_id), dim=1)
        for i, row in zip(idx, p.tolist()):
            probs[i] = row
    return probs


def settings_key(size):
    """What the written model depends on: the data, the reference module and the exporter, the
    settings, and FORMAT (bumped when this script trains or writes differently; its own bytes
    are left out so that a comment does not cost minutes of training)."""
    h = hashlib.sha256(FORMAT.encode())
    for path in (DATA, ROOT / "tests/transformers/make_fixtures.py",
                 ROOT / "bench/peers/make_transformer_checkpoints.py"):
        h.update(path.read_bytes())
    h.update(json.dumps(size, sort_keys=True).encode())
    return h.hexdigest()[:16]


def train(args, size, key):
    import torch
    sys.path.insert(0, str(ROOT / "tests" / "transformers"))
    sys.path.insert(0, str(ROOT / "bench" / "peers"))
    import make_fixtures as f
    from make_transformer_checkpoints import export_onnx

    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    f.HIDDEN, f.LAYERS, f.HEADS = size["hidden"], size["layers"], size["heads"]
    f.INTERMEDIATE, f.MAX_POSITIONS, f.LABELS = size["intermediate"], size["max_tokens"], LABELS
    train_rows, heldout = rows(size["cap"])
    vocab = make_vocabulary(f, [r["text"] for r in train_rows], size["vocab"])
    pad_id = vocab["[PAD]"]
    encode = lambda t: f.encode(clean(t), vocab, f.SPECIALS_BERT, size["max_tokens"])
    encoded = [encode(r["text"]) for r in train_rows]
    labels = [LABELS.index(r["label"]) for r in train_rows]
    unk = sum(e.count(vocab["[UNK]"]) for e in encoded) / sum(len(e) - 2 for e in encoded)
    log(f"{len(train_rows)} train rows, {len(heldout)} held out, vocabulary {len(vocab)} "
        f"([UNK] {100 * unk:.2f}% of train tokens), mean {sum(map(len, encoded)) / len(encoded):.1f} tokens")

    model = f.SequenceClassifier(len(vocab), False, pad_id)
    initialise(model, SEED)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=size["lr"])
    steps = size["epochs"] * math.ceil(len(encoded) / size["batch"])
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))
    g = torch.Generator().manual_seed(SEED)
    started, step = time.monotonic(), 0
    for epoch in range(size["epochs"]):
        total, seen = 0.0, 0
        for ids, mask, y in batches(encoded, labels, size["batch"], pad_id, g):
            loss = torch.nn.functional.cross_entropy(model(ids, mask), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            total, seen = total + loss.item() * len(y), seen + len(y)
            if step % 100 == 0:
                log(f"epoch {epoch + 1} step {step}/{steps}: loss {total / seen:.3f} "
                    f"({time.monotonic() - started:.0f} s)")
        log(f"epoch {epoch + 1}: mean loss {total / seen:.3f} ({time.monotonic() - started:.0f} s)")
    seconds = time.monotonic() - started
    model.eval()

    held_encoded = [encode(r["text"]) for r in heldout]
    probs = predict(f.run, model, held_encoded, pad_id)
    correct = sum(max(range(len(p)), key=p.__getitem__) == LABELS.index(r["label"])
                  for p, r in zip(probs, heldout))
    log(f"trained in {seconds:.0f} s; held-out accuracy (PyTorch, float32) {100 * correct / len(heldout):.2f}%")

    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        f.OUT = work
        f.write_fixture("model", vocab, f.SPECIALS_BERT, False, model, "F32")
        d = work / "model"
        (d / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)))
        export_onnx(model, d / "model.onnx")
        with open(d / "heldout.jsonl", "w") as h:
            for r in heldout:
                h.write(json.dumps(r) + "\n")
        info = {"key": key, "format": FORMAT, "size": size, "seed": SEED, "threads": args.threads,
                "labels": LABELS, "train_rows": len(train_rows), "heldout_rows": len(heldout),
                "vocabulary": len(vocab), "parameters": sum(p.numel() for p in model.parameters()),
                "train_seconds": round(seconds, 1), "steps": steps, "torch": torch.__version__,
                "heldout_accuracy_pytorch": correct / len(heldout),
                "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        (d / "training.json").write_text(json.dumps(info, indent=1) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.rename(d, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the checkpoint directory to write")
    ap.add_argument("--tiny", action="store_true", help="the smoke run's tiny model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="train again even when cached")
    args = ap.parse_args()
    size = SIZES["tiny" if args.tiny else "small"]
    key = settings_key(size)
    meta = pathlib.Path(args.out) / "training.json"
    if not args.force and meta.exists() and json.loads(meta.read_text()).get("key") == key:
        print(args.out)
        return
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"train_bert_classifier: {e}: apt-get install python3-torch "
                         "(and run this with /usr/bin/python3)")
    import warnings
    warnings.filterwarnings("ignore")  # the ONNX exporter's tracer notes
    train(args, size, key)
    print(args.out)


if __name__ == "__main__":
    main()
