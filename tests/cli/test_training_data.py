"""The learned default's training data (issue 19): models/training-mix.py and the router-query
sources in models/data. Standard library only."""
import collections
import gzip
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "models", "data")
CATEGORIES = {"biology", "business", "chemistry", "computer science", "economics", "engineering",
              "health", "history", "law", "math", "other", "philosophy", "physics", "psychology"}


def router_queries():
    with gzip.open(os.path.join(DATA, "router_queries.jsonl.gz"), "rt") as f:
        return [json.loads(line) for line in f]


def test_router_queries_map_every_label_to_one_of_the_14_categories():
    rows = router_queries()
    assert len(rows) == 59550
    assert {r["source"] for r in rows} == {"stackexchange", "medquad", "clinc150", "banking77"}
    assert {r["split"] for r in rows} == {"train", "test"}
    assert {r["category"] for r in rows} <= CATEGORIES
    # The mapping is a function of the source's own label (a StackExchange site is one category).
    seen = collections.defaultdict(set)
    for r in rows:
        seen[(r["source"], r["label"])].add(r["category"])
    assert all(len(c) == 1 for c in seen.values()), [k for k, c in seen.items() if len(c) > 1][:5]
    assert all(r["category"] == "business" for r in rows if r["source"] == "banking77")
    assert all(r["category"] == "health" for r in rows if r["source"] == "medquad")


def test_training_mix_caps_each_source_and_category_and_never_takes_test_rows(tmp_path):
    out = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in out:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "training-mix.py"),
                        str(path), "--cap", "5"], check=True, timeout=120)
    assert out[0].read_bytes() == out[1].read_bytes()  # the same mix on every run
    rows = [json.loads(line) for line in out[0].read_text().splitlines()]
    mmlu = [r for r in rows if r["source"] == "mmlu_pro"]
    assert len(mmlu) == 12032 and all("split" not in r for r in mmlu)  # the trainer hashes these
    extra = [r for r in rows if r["source"] != "mmlu_pro"]
    assert all(r["split"] == "train" for r in extra)
    test_texts = {r["text"] for r in router_queries() if r["split"] == "test"}
    train_texts = {r["text"] for r in router_queries() if r["split"] == "train"}
    assert not any(r["text"] in test_texts and r["text"] not in train_texts for r in extra)
    per_group = collections.Counter((r["source"], r["category"]) for r in extra)
    assert max(per_group.values()) == 5
    assert {s for s, _ in per_group} == {"stackexchange", "medquad", "clinc150", "banking77"}


def test_shape_augmentation_keeps_each_variant_in_its_rows_split(tmp_path):
    out = tmp_path / "mix.jsonl"
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "training-mix.py"), str(out),
                    "--cap", "20", "--augment", "0.3"], check=True, timeout=120)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    base = [r for r in rows if "shape" not in r and r["source"] != "code"]
    framed = [r for r in rows if "shape" in r]
    assert {r["shape"] for r in framed} == {"chat", "context", "long"}
    assert 0.25 < len(framed) / len(base) < 0.35
    # A variant carries its row's id (the trainer's test and validation split key), category,
    # source and split, and contains the row's text: a held-out question never leaks.
    by_id = {r.get("id", r["text"]): r for r in base}
    for r in framed:
        original = by_id[r["id"]]
        assert original["text"] in r["text"] and original["text"] != r["text"]
        assert (r["category"], r["source"], r.get("split")) == \
            (original["category"], original["source"], original.get("split"))
    code = [r for r in rows if r["source"] == "code"]
    assert len(code) > 50 and all(r["category"] == "computer science" for r in code)
    assert any(r["text"].startswith("```") for r in code)


def test_heldout_variants_cover_only_held_out_rows(tmp_path):
    mix, variants = tmp_path / "mix.jsonl", tmp_path / "framed.jsonl"
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "training-mix.py"), str(mix),
                    "--cap", "1", "--heldout-variants", str(variants)], check=True, timeout=120)
    rows = [json.loads(line) for line in variants.read_text().splitlines()]
    sources = collections.Counter(r["source"] for r in rows)
    test = collections.Counter(r["source"] + " framed" for r in router_queries()
                               if r["split"] == "test")
    assert sources == test + collections.Counter({"mmlu_pro framed": 12032})
    # MMLU-Pro rows keep their ids, so `eval --split test` holds out the same 20%.
    assert all("id" in r and "split" not in r for r in rows if r["source"] == "mmlu_pro framed")
    assert all(r["split"] == "test" for r in rows if r["source"] != "mmlu_pro framed")
