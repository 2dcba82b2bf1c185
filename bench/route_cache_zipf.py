#!/usr/bin/env python3
"""The semantic cache of `mcpclass route` under a Zipf query stream (issue 33), embedded and
Redis backends. A few hundred distinct questions (subjects x question forms), each with a
paraphrase; each request draws a question by Zipf rank (s=1.1 by default, fixed seed) and sends
it or its paraphrase (half each) from `--clients` concurrent connections. The upstream is
tests/route/fake_upstream.py holding each answer 200 ms (a realistic generation); the encoder is
USE-lite (~/.cache/mcpclass/use-lite).

Reported per backend: hit ratio (exact and semantic), hits on a question never asked before
(another question's answer: the threshold's false hits), requests per second, and from the
Server-Timing header of each semantic hit the p50 of the lookup (exact path, embedding, search),
of the encoder's own share, and of their difference (issue goal: within 0.3 ms). `redis`: two
route instances behind one redis-server (a Unix socket in a temporary directory), requests
alternating between them.

usage: bench/route_cache_zipf.py --cli build/mcpclass [--requests 3000] [--json OUT]"""
import argparse
import http.client
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "route"))
from fake_upstream import FakeUpstream  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from route_cache import CONFIG, USE_LITE  # noqa: E402

SUBJECTS = [
    "photosynthesis", "the French Revolution", "black holes", "the stock market", "vaccines",
    "sourdough bread", "quantum entanglement", "the Roman Empire", "climate change", "jazz music",
    "machine learning", "the human heart", "volcanoes", "the printing press", "cryptocurrency",
    "coral reefs", "the Renaissance", "electric cars", "honey bees", "the Great Wall of China",
    "plate tectonics", "chess openings", "the immune system", "solar panels", "the Cold War",
    "compound interest", "the water cycle", "Shakespeare's sonnets", "DNA replication",
    "the Olympic Games",
]
# Each question form with its paraphrase.
FORMS = [
    ("Explain {} in simple terms", "Can you give me a simple explanation of {}?"),
    ("What is the history of {}?", "Tell me about the history of {}"),
    ("Why is {} important?", "What makes {} so important?"),
    ("What are common misconceptions about {}?", "What do people often get wrong about {}?"),
    ("Give me three fun facts about {}", "Tell me three interesting facts about {}"),
    ("How would you teach {} to a child?", "How can I explain {} to a kid?"),
    ("What are the main criticisms of {}?", "What criticisms are there of {}?"),
    ("Write a short poem about {}", "Compose a brief poem on {}"),
    ("What books should I read about {}?", "Can you recommend some books on {}?"),
    ("Summarise the key ideas of {}", "What are the main ideas behind {}?"),
]


def questions():
    return [(f.format(s), p.format(s)) for s in SUBJECTS for f, p in FORMS]


def zipf_stream(n_items, n_requests, s, seed):
    rng = random.Random(seed)
    weights = [1 / (k ** s) for k in range(1, n_items + 1)]
    order = list(range(n_items))
    rng.shuffle(order)  # ranks over the questions in no particular order
    ranks = rng.choices(range(n_items), weights=weights, k=n_requests)
    return [(order[r], rng.random() < 0.5) for r in ranks]


def start_route(cli, tmp, name, url, cache):
    config = os.path.join(tmp, f"{name}.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(use=USE_LITE, url=url, cache=cache))
    proc = subprocess.Popen([cli, "route", "--config", config, "--http", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"routing \d+ models on http://127\.0\.0\.1:(\d+)/", line)
        if m:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
            return proc, int(m.group(1))
    raise SystemExit("route did not start")


def run_stream(ports, stream, qs, clients):
    results = [None] * len(stream)
    it = iter(enumerate(stream))
    lock = threading.Lock()

    def worker(w):
        conns = {p: http.client.HTTPConnection("127.0.0.1", p, timeout=60) for p in ports}
        while True:
            with lock:
                nxt = next(it, None)
            if nxt is None:
                break
            i, (item, para) = nxt
            port = ports[i % len(ports)]
            text = qs[item][1 if para else 0]
            body = json.dumps({"model": "auto", "messages": [{"role": "user", "content": text}],
                               "fake": {"head_delay": 0.2}})
            c = conns[port]
            c.request("POST", "/v1/chat/completions", body=body,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            assert r.status == 200, r.status
            timing = dict(re.findall(r"cache-(\w+);dur=([\d.]+)", r.getheader("Server-Timing", "")))
            sim = r.getheader("x-mcpclass-cache-similarity")
            results[i] = {"item": item, "hit": r.getheader("x-vsr-cache-hit") == "true",
                          "exact": sim is not None and float(sim) == 1.0,
                          "lookup": float(timing.get("lookup", "nan")),
                          "encode": float(timing.get("encode", "nan")), "t": time.monotonic()}

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, time.monotonic() - t0


def summarise(results, seconds):
    asked, false_hits = set(), 0
    for r in sorted(results, key=lambda r: r["t"]):
        if r["hit"] and r["item"] not in asked:
            false_hits += 1
        asked.add(r["item"])
    hits = [r for r in results if r["hit"]]
    semantic = [r for r in hits if not r["exact"]]
    p50 = statistics.median
    out = {"requests": len(results), "seconds": seconds, "requests_per_s": len(results) / seconds,
           "hit_ratio": len(hits) / len(results),
           "exact_hits": len(hits) - len(semantic), "semantic_hits": len(semantic),
           "hits_on_unasked_question": false_hits, "distinct_questions_asked": len(asked)}
    if semantic:
        out["semantic_lookup_p50_ms"] = p50(r["lookup"] for r in semantic)
        out["semantic_encode_p50_ms"] = p50(r["encode"] for r in semantic)
        out["semantic_lookup_over_encoder_p50_ms"] = p50(r["lookup"] - r["encode"] for r in semantic)
    exact = [r for r in hits if r["exact"]]
    if exact:
        out["exact_lookup_p50_ms"] = p50(r["lookup"] for r in exact)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "mcpclass"))
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--backends", default="memory,redis")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not os.path.exists(f"{USE_LITE}/use-lite.safetensors"):
        sys.exit("USE-lite is not in ~/.cache/mcpclass (models/fetch-use-lite.sh)")
    qs = questions()
    stream = zipf_stream(len(qs), args.requests, args.zipf, seed=33)
    out = {"distinct_questions": len(qs), "paraphrases": len(qs), "zipf_s": args.zipf,
           "clients": args.clients, "threshold": args.threshold,
           "upstream_head_delay_ms": 200, "load_average_before": os.getloadavg()}
    up = FakeUpstream().start()
    tmp = tempfile.mkdtemp()
    try:
        for backend in args.backends.split(","):
            procs, redis = [], None
            cache = f"{{similarity_threshold: {args.threshold}}}"
            if backend == "redis":
                sock = os.path.join(tmp, "redis.sock")
                redis = subprocess.Popen(
                    [shutil.which("redis-server"), "--port", "0", "--unixsocket", sock, "--save",
                     "", "--appendonly", "no", "--dir", tmp],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                while not os.path.exists(sock):
                    time.sleep(0.05)
                cache = (f'{{similarity_threshold: {args.threshold}, backend_type: redis, '
                         f'redis: {{address: "{sock}"}}}}')
            try:
                names = ["a", "b"] if backend == "redis" else ["a"]
                ports = []
                for name in names:
                    proc, port = start_route(args.cli, tmp, f"{backend}-{name}", up.url, cache)
                    procs.append(proc)
                    ports.append(port)
                results, seconds = run_stream(ports, stream, qs, args.clients)
                out[backend] = summarise(results, seconds)
                out[backend]["instances"] = len(ports)
                print(backend, json.dumps(out[backend], indent=2), flush=True)
            finally:
                for p in procs:
                    p.terminate()
                    p.wait(timeout=30)
                if redis:
                    redis.kill()
                    redis.wait()
    finally:
        up.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out["load_average_after"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
