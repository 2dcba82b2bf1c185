#!/usr/bin/env python3
"""The semantic cache of `mcpclass route` (issue 33): a hit answered against the upstream it
replaces. The upstream is tests/route/fake_upstream.py holding each answer 200 ms (a realistic
generation); route's cache embeds queries with USE-lite (~/.cache/mcpclass/use-lite). At one
connection, sequentially, p50 of:
  - miss: a new query, through route to the upstream and stored;
  - exact hit: the same query again (hash lookup);
  - semantic hit: a paraphrase (the encoder's embedding, then the hnswlib search);
ratio = miss p50 / hit p50 (goal >= 20x); semantic - exact = what the embedding and the search
add to a hit (goal: within 0.3 ms over the encoder's own time, which this difference includes).

usage: bench/route_cache.py --cli build/mcpclass [--queries 20] [--json OUT]"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "route"))
from fake_upstream import FakeUpstream  # noqa: E402

USE_LITE = os.path.expanduser("~/.cache/mcpclass/use-lite")
# Unrelated questions, each with a paraphrase.
PAIRS = [
    ("How do I reverse a list in Python?", "How can I reverse a Python list?"),
    ("What is the capital of Australia?", "Which city is the capital of Australia?"),
    ("Explain how photosynthesis works", "How does photosynthesis work?"),
    ("When did the Roman Empire fall?", "In what year did the Roman Empire fall?"),
    ("What causes the seasons on Earth?", "Why does the Earth have seasons?"),
    ("How do vaccines train the immune system?", "How does a vaccine train the immune system?"),
    ("Write a haiku about autumn leaves", "Write a haiku about the leaves in autumn"),
    ("What is the derivative of sine?", "What's the derivative of the sine function?"),
    ("How do I make a sourdough starter?", "How can I make a sourdough starter at home?"),
    ("What is a black hole?", "What exactly is a black hole?"),
    ("How does a hash table handle collisions?", "How do hash tables deal with collisions?"),
    ("Who painted the Mona Lisa?", "Who was the painter of the Mona Lisa?"),
    ("How many bones are in the human body?", "How many bones does a human body have?"),
    ("What is the boiling point of water at sea level?",
     "At sea level, what is the boiling point of water?"),
    ("Translate good morning into Spanish", "How do you say good morning in Spanish?"),
    ("What is inflation in economics?", "In economics, what does inflation mean?"),
    ("How do I change a flat tire?", "How can I change a flat tyre on my car?"),
    ("What is the speed of light?", "How fast does light travel?"),
    ("Why is the sky blue?", "Why does the sky look blue?"),
    ("What are the rules of chess castling?", "How does castling work in chess?"),
]

CONFIG = """categories:
  - {{name: other, description: o, model: m, use_reasoning: false}}
classifier: {{kind: rules, fallback: other, rules: {{}}}}
routing:
  default_model: m
  embedding_model: {{encoder: "{use}/use-lite.safetensors", tokenizer: "{use}/tokenizer.model"}}
route:
  semantic_cache: {cache}
  models:
    m: {{base_url: "{url}"}}
"""


def post(port, text):
    body = {"model": "auto", "messages": [{"role": "user", "content": text}],
            "fake": {"head_delay": 0.2}}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body=json.dumps(body),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    elapsed = time.perf_counter() - t0
    hit = r.getheader("x-vsr-cache-hit") == "true"
    c.close()
    assert r.status == 200, r.status
    return elapsed * 1000, hit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "mcpclass"))
    ap.add_argument("--queries", type=int, default=len(PAIRS))
    ap.add_argument("--json")
    args = ap.parse_args()
    if not os.path.exists(f"{USE_LITE}/use-lite.safetensors"):
        sys.exit("USE-lite is not in ~/.cache/mcpclass (models/fetch-use-lite.sh)")
    up = FakeUpstream().start()
    tmp = tempfile.mkdtemp()
    config = os.path.join(tmp, "router.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(use=USE_LITE, url=up.url, cache="{similarity_threshold: 0.8}"))
    proc = subprocess.Popen([args.cli, "route", "--config", config, "--http", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in proc.stderr:
            m = re.search(r"routing \d+ models on http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "route did not start"
        pairs = PAIRS[:args.queries]
        miss, exact, semantic = [], [], []
        for question, paraphrase in pairs:
            t, hit = post(port, question)
            if not hit:  # a question near an earlier one would be a (semantic) hit
                miss.append(t)
            t, hit = post(port, question)
            assert hit
            exact.append(t)
            t, hit = post(port, paraphrase)
            if hit:
                semantic.append(t)
        p50 = statistics.median
        out = {"queries": len(pairs), "miss_p50_ms": p50(miss), "exact_hit_p50_ms": p50(exact),
               "semantic_hits": len(semantic),
               "semantic_hit_p50_ms": p50(semantic) if semantic else None}
        out["ratio_exact"] = out["miss_p50_ms"] / out["exact_hit_p50_ms"]
        if semantic:
            out["ratio_semantic"] = out["miss_p50_ms"] / out["semantic_hit_p50_ms"]
            out["embedding_and_search_ms"] = out["semantic_hit_p50_ms"] - out["exact_hit_p50_ms"]
        print(json.dumps(out, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=2)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        up.stop()


if __name__ == "__main__":
    main()
