"""Issue 47: a text argument wrapped in brackets reaches the command unchanged. CLI11 reads an
argument written "[a,b]" as the list a, b wherever several values are allowed, so
`mcpclass tokenize "[CLS]"` tokenized "CLS" and `detect "[a,b]"` searched two texts."""
import json
import os
import shlex
import subprocess

import pytest

HERE = os.path.dirname(__file__)
BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(HERE, "..", "..", "build", "mcpclass")
BERT = os.path.join(HERE, "..", "tokenizers", "fixtures", "bert-uncased.json")
TOKEN_MODEL = os.path.join(HERE, "..", "transformers", "fixtures", "bert-token-f32")
# Bracketed as CLI11 would split them, one with a comma, and ones that start with the mark the
# command line escapes them with (src/cli/verbatim_args.cpp), which must come through too.
TEXTS = ["[CLS]", "[a,b]", "[]", "[ x ]", "\x1f[CLS]", "\x1fplain"]


def run(*args, stdin=None):
    return subprocess.run([BIN, *args], input=stdin, capture_output=True, timeout=60)


def test_tokenize_takes_each_argument_as_one_text():
    # The same texts through --batch (JSON lines on stdin, never parsed by CLI11) are the truth.
    batch = run("tokenize", "--tokenizer", BERT, "--batch",
                stdin="".join(json.dumps(t) + "\n" for t in TEXTS).encode())
    assert batch.returncode == 0, batch.stderr
    want = [json.loads(line)["ids"] for line in batch.stdout.decode().splitlines()]
    out = run("tokenize", "--tokenizer", BERT, "--json", *TEXTS)
    assert out.returncode == 0, out.stderr
    got = [json.loads(line)["ids"] for line in out.stdout.decode().splitlines()]
    assert got == want
    # "[CLS]" is the special token itself, as the reference library reads it: [CLS] [CLS] [SEP].
    cls = run("tokenize", "--tokenizer", BERT, "--json", "--", "[CLS]")
    assert json.loads(cls.stdout)["tokens"] == ["[CLS]", "[CLS]", "[SEP]"]


def test_detect_searches_each_argument_as_one_text():
    texts = ["[a,b]", "[CLS]", "[x@example.com]"]
    out = run("detect", "--model", TOKEN_MODEL, *texts)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert len(answers) == len(texts)  # was 4: "[a,b]" searched as "a" and "b"
    for text, answer in zip(texts, answers):
        for span in answer["spans"]:
            assert 0 <= span["byte_start"] < span["byte_end"] <= len(text.encode())


@pytest.fixture
def bracket_rules(tmp_path):
    config = tmp_path / "brackets.json"
    config.write_text(json.dumps({
        "categories": [{"name": "brackets", "description": "A bracketed CLS"},
                       {"name": "general", "description": "Everything else"}],
        "classifier": {"kind": "rules", "fallback": "general",
                       "rules": {"brackets": {"patterns": [r"^\[cls\]$"]}}}}))
    return str(config)


def test_classify_reads_the_bracketed_text(bracket_rules):
    out = run("classify", "-c", bracket_rules, "[CLS]")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["category"] == "brackets"


def test_call_passes_its_arguments_unchanged(bracket_rules):
    server = shlex.join([BIN, "serve", "--stdio", "-c", bracket_rules])
    out = run("call", "--cmd", server, "classify_text", "text=[CLS]")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["structuredContent"]["class"] == 0  # brackets
    # One argument as typed: key "[text", value "a,text=b]", so the tool misses its text (exit 1).
    # It was once split into the two arguments text=a and text=b, and the call answered.
    out = run("call", "--cmd", server, "classify_text", "[text=a,text=b]")
    assert out.returncode == 1, out.stdout
    assert b"Missing required property 'text'" in out.stdout
