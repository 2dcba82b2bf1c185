#!/usr/bin/env python3
"""Writes the learned default's training rows: every MMLU-Pro question (the trainer keeps its
hashed 80%), plus up to CAP rows per (source, category) of the *train* split of each source in
router_queries.jsonl.gz (StackExchange titles, MedQuAD, CLINC150, Banking77). The cap keeps any
one shape from dominating (StackExchange alone has 41,626 train rows); test rows are never
written. Rows are picked by a hash of their text, so the mix is the same on every machine.

usage: models/training-mix.py OUT.jsonl [--cap N] [--exclude SOURCE]...   (standard library only)"""
import argparse
import collections
import gzip
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--exclude", action="append", default=[],
                   help="leave this source out (leave-one-source-out runs)")
    a = p.parse_args()
    groups = collections.defaultdict(list)
    with gzip.open(os.path.join(HERE, "data", "router_queries.jsonl.gz"), "rt") as f:
        for line in f:
            row = json.loads(line)
            if row["split"] == "train" and row["source"] not in a.exclude:
                groups[(row["source"], row["category"])].append(row)
    tmp = a.out + ".tmp"
    with open(os.path.join(HERE, "data", "mmlu_pro_questions.jsonl")) as mmlu, \
            open(tmp, "w") as out:
        for line in mmlu:
            row = json.loads(line)
            out.write(json.dumps({"id": row["id"], "text": row["text"],
                                  "category": row["category"], "source": "mmlu_pro"}) + "\n")
        for key in sorted(groups):
            rows = sorted(groups[key], key=lambda r: hashlib.sha256(r["text"].encode()).digest())
            for row in rows[:a.cap]:
                out.write(json.dumps({"text": row["text"], "category": row["category"],
                                      "source": row["source"], "split": "train"}) + "\n")
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
