"""`mcpclass tokenize`: ids, tokens and byte offsets of each tokenizer fixture, JSON and batch
modes, and its bad input (invalid UTF-8, over-long batch lines, a bad file). The comparison with
the reference library itself is tests/tokenizers (ctest tokenizers.reference.*)."""
import glob
import json
import os
import subprocess

import pytest

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "mcpclass")
FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "tokenizers",
                                         "fixtures", "*.json")))
TEXT = "Héllo, WORLD! 中文 👍🏽 [MASK] x²"


def run(*args, stdin=None):
    return subprocess.run([BIN, "tokenize", *args], input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: os.path.basename(p))
def test_json_output_has_ids_tokens_and_offsets_into_the_text(fixture):
    out = run("--tokenizer", fixture, "--json", "--offsets", TEXT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert len(result["ids"]) == len(result["tokens"]) == len(result["offsets"]) > 2
    raw = TEXT.encode()
    for begin, end in result["offsets"]:
        assert 0 <= begin <= end <= len(raw)
    # The non-special offsets cover the text in order, each on a UTF-8 character boundary.
    spans = [(b, e) for b, e in result["offsets"] if e > b]
    assert spans == sorted(spans)
    for b, e in spans:
        raw[b:e].decode()


def test_text_output_and_overflowing_windows():
    fixture = [f for f in FIXTURES if f.endswith("bert-uncased.json")][0]
    out = run("--tokenizer", fixture, "--offsets", "--max-length", "6", "--stride", "1",
              "a b c d e f g")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines[0].startswith("ids: ")
    assert lines[1] == 'tokens: "[CLS]" "a" "b" "c" "d" "[SEP]"'
    assert lines[2] == "offsets: 0-0 0-1 2-3 4-5 6-7 0-0"
    assert lines[3] == "window 1:"
    assert lines[5] == '  tokens: "[CLS]" "d" "e" "f" "g" "[SEP]"'


def test_batch_answers_each_line_and_reports_invalid_utf8_in_place():
    fixture = [f for f in FIXTURES if f.endswith("roberta.json")][0]
    # A raw 0xFF byte inside the JSON string: that line gets an error object, the others ids.
    stdin = b'"first line"\n"bad \xff byte"\n"third"\n'
    out = run("--tokenizer", fixture, "--batch", stdin=stdin)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(l) for l in out.stdout.decode().splitlines()]
    assert len(lines) == 3
    assert lines[0]["ids"] and lines[2]["ids"]
    assert "not valid UTF-8" in lines[1]["error"]


def test_invalid_utf8_argument_is_an_error_naming_the_offset():
    fixture = [f for f in FIXTURES if f.endswith("bert-cased.json")][0]
    out = run("--tokenizer", fixture, b"ok\xff")
    assert out.returncode == 1
    assert b"offset 2" in out.stderr


def test_batch_refuses_a_line_over_the_limit():
    fixture = [f for f in FIXTURES if f.endswith("gemma.json")][0]
    out = run("--tokenizer", fixture, "--batch", "--max-line-bytes", "100",
              stdin=b'"short"\n"' + b"x" * 200 + b'"\n')
    assert out.returncode == 2
    assert b"stdin line 2 is 202 bytes, over --max-line-bytes 100" in out.stderr
    assert json.loads(out.stdout.decode().splitlines()[0])["ids"]


def test_batch_refuses_a_line_that_is_not_a_json_string():
    fixture = [f for f in FIXTURES if f.endswith("gemma.json")][0]
    out = run("--tokenizer", fixture, "--batch", stdin=b'{"text": "x"}\n')
    assert out.returncode == 2
    assert b"stdin line 1 is not a JSON string" in out.stderr


def test_a_bad_tokenizer_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "Nope"}}')
    out = run("--tokenizer", str(bad), "x")
    assert out.returncode == 2
    assert b"unsupported model type 'Nope'" in out.stderr


def test_sentencepiece_model_of_use_lite_gives_its_ids():
    # The USE-lite files come from models/fetch-use-lite.sh (instant when cached), as for the
    # learned unit tests.
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    fetch = subprocess.run([os.path.join(root, "models", "fetch-use-lite.sh"), BIN],
                           capture_output=True, timeout=1800)
    if fetch.returncode != 0:
        pytest.skip("models/fetch-use-lite.sh failed: " + fetch.stderr.decode()[-300:])
    cache = os.environ.get("MCPCLASS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache"), "mcpclass")
    out = run("--tokenizer", os.path.join(cache, "use-lite", "tokenizer.model"), "--json", "hello")
    assert out.returncode == 0, out.stderr
    # ▁hell (2002) + o (102), as tests/unit/test_tokenizer_sentencepiece.cpp knows them.
    assert json.loads(out.stdout) == {"ids": [2002, 102]}
