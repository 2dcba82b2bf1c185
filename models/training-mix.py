#!/usr/bin/env python3
"""Writes the learned default's training rows: every MMLU-Pro question (the trainer keeps its
hashed 80%), plus up to CAP rows per (source, category) of the *train* split of each source in
router_queries.jsonl.gz (StackExchange titles, MedQuAD, CLINC150, Banking77). The cap keeps any
one shape from dominating (StackExchange alone has 41,626 train rows); test rows are never
written. Rows are picked by a hash of their text, so the mix is the same on every machine.

With --augment RATE, that share of the rows also appears in another shape (models/shapes.py:
chat framing, context before the question, a long prompt), keeping its row's id and split so a
held-out question never leaks through its variant, and code snippets with a question about them
are added as computer science. --scope-rows OUT writes every train row of the same sources
(MMLU-Pro's with ids, so the trainer holds the same 20% out) uncapped and unframed: the rows the
head's out-of-scope score compares a text with (`mcpclass train --scope-data`). --heldout-variants OUT writes the held-out rows (MMLU-Pro's, which
`mcpclass eval --split test` picks by id, and each source's test split) in the held-out templates'
shapes, as sources "<source> framed": what framing a head was not trained on costs.

usage: models/training-mix.py [OUT.jsonl] [--cap N] [--augment RATE] [--exclude SOURCE]...
       [--scope-rows OUT] [--heldout-variants OUT]   (standard library only)"""
import argparse
import collections
import gzip
import hashlib
import json
import os

import shapes

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", help="the training rows (omit to write only --heldout-variants)")
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--exclude", action="append", default=[],
                   help="leave this source out (leave-one-source-out runs)")
    p.add_argument("--augment", type=float, default=0.0,
                   help="share of rows that also appear in another shape (0 = none)")
    p.add_argument("--scope-rows", metavar="OUT",
                   help="also write every train row, uncapped and unframed, to OUT")
    p.add_argument("--heldout-variants", metavar="OUT",
                   help="also write framed variants of the held-out rows to OUT")
    a = p.parse_args()
    if a.heldout_variants:
        write_heldout_variants(a.heldout_variants)
    if a.out is None:
        if a.scope_rows:
            p.error("--scope-rows is written with the training rows: give OUT")
        if not a.heldout_variants:
            p.error("nothing to write: give OUT or --heldout-variants")
        return
    groups = collections.defaultdict(list)
    with gzip.open(os.path.join(HERE, "data", "router_queries.jsonl.gz"), "rt") as f:
        for line in f:
            row = json.loads(line)
            if row["split"] == "train" and row["source"] not in a.exclude:
                groups[(row["source"], row["category"])].append(row)
    tmp = a.out + ".tmp"
    with open(os.path.join(HERE, "data", "mmlu_pro_questions.jsonl")) as mmlu, \
            open(tmp, "w") as out:
        def emit(row):
            out.write(json.dumps(row) + "\n")
            if a.augment > 0 and shapes.fraction(row["text"], "augment:") < a.augment:
                shape, text = shapes.train_variant(row["text"])
                framed = dict(row, text=text, shape=shape)
                framed.setdefault("id", row["text"])  # the trainer's split and validation key
                out.write(json.dumps(framed) + "\n")

        for line in mmlu:
            row = json.loads(line)
            emit({"id": row["id"], "text": row["text"], "category": row["category"],
                  "source": "mmlu_pro"})
        for key in sorted(groups):
            rows = sorted(groups[key], key=lambda r: hashlib.sha256(r["text"].encode()).digest())
            for row in rows[:a.cap]:
                # The label marks CLINC150's out-of-scope rows ("oos"), which the trainer keeps
                # out of the head's out-of-scope prototypes.
                emit({"text": row["text"], "category": row["category"], "source": row["source"],
                      "split": "train", "label": row["label"]})
        if a.augment > 0:
            for text in shapes.code_rows():
                out.write(json.dumps({"text": text, "category": "computer science",
                                      "source": "code", "split": "train"}) + "\n")
        out.flush()
        os.fsync(out.fileno())  # on disk before the rename makes it the mix
    os.replace(tmp, a.out)
    if a.scope_rows:
        write_scope_rows(a.scope_rows, groups)


def write_scope_rows(path, groups):
    tmp = path + ".tmp"
    with open(os.path.join(HERE, "data", "mmlu_pro_questions.jsonl")) as mmlu, open(tmp, "w") as out:
        for line in mmlu:
            row = json.loads(line)
            out.write(json.dumps({"id": row["id"], "text": row["text"], "category": row["category"],
                                  "source": "mmlu_pro"}) + "\n")
        for key in sorted(groups):
            for row in groups[key]:
                out.write(json.dumps({"text": row["text"], "category": row["category"],
                                      "source": row["source"], "split": "train",
                                      "label": row["label"]}) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def write_heldout_variants(path):
    """MMLU-Pro rows keep their ids (eval's --split test holds the same 20% out); source rows
    are their test split only."""
    tmp = path + ".tmp"
    with open(os.path.join(HERE, "data", "mmlu_pro_questions.jsonl")) as mmlu, \
            gzip.open(os.path.join(HERE, "data", "router_queries.jsonl.gz"), "rt") as queries, \
            open(tmp, "w") as out:
        for line in mmlu:
            row = json.loads(line)
            out.write(json.dumps({"id": row["id"], "text": shapes.heldout_variant(row["text"])[1],
                                  "category": row["category"], "source": "mmlu_pro framed"}) + "\n")
        for line in queries:
            row = json.loads(line)
            if row["split"] != "test":
                continue
            out.write(json.dumps({"text": shapes.heldout_variant(row["text"])[1],
                                  "category": row["category"], "label": row["label"],
                                  "source": row["source"] + " framed", "split": "test"}) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
