"""`kind: transformer` through the command line: `mcpclass classify` answers with the
checkpoint's own probabilities (the PyTorch reference of tests/transformers), and a damaged
checkpoint is a load error naming the file and tensor, exit 1 like any model that fails to load
(exit 2 is kept for the configuration document itself)."""
import json
import math
import os
import shutil
import subprocess
import sys

BIN = os.environ.get("MCPCLASS_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "mcpclass")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "transformers", "fixtures")


def classify(tmp_path, model, text, adapter=None):
    config = tmp_path / "config.json"
    classifier = {"kind": "transformer", "model": str(model), "max_tokens": 64}
    if adapter:
        classifier["adapter"] = str(adapter)
    config.write_text(json.dumps({"classifier": classifier}))
    return subprocess.run([BIN, "classify", "-p", "-c", str(config), text],
                          capture_output=True, timeout=60)


def softmax(logits):
    top = max(logits)
    weights = [math.exp(v - top) for v in logits]
    return [w / sum(weights) for w in weights]


def test_classify_answers_the_reference_probabilities(tmp_path):
    check_reference(tmp_path, "reference.json", "bert", None)


def test_classify_with_a_lora_adapter_answers_its_reference(tmp_path):
    # bert-f32 with the PEFT adapter bert-lora merged at load, against the reference that runs
    # the adapter unmerged (tests/transformers/make_lora_fixtures.py).
    check_reference(tmp_path, "lora_reference.json", "bert-lora", os.path.join(FIXTURES, "bert-lora"))


def check_reference(tmp_path, file, name, adapter):
    reference = json.load(open(os.path.join(FIXTURES, file)))
    for i in (1, 3, 16):
        out = classify(tmp_path, os.path.join(FIXTURES, "bert-f32"), reference["texts"][i], adapter)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        want = softmax(reference["models"][name]["logits"][i])
        assert max(abs(a - b) for a, b in zip(result["probabilities"], want)) < 1e-4
        assert result["category"] == reference["labels"][want.index(max(want))]


def test_a_checkpoint_without_a_tensor_is_a_load_error_naming_it(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(os.path.join(FIXTURES, "bert-f32"), model)
    raw = (model / "model.safetensors").read_bytes()
    # Rename the tensor in the header (same length, so the offsets stay right).
    (model / "model.safetensors").write_bytes(
        raw.replace(b'"classifier.bias"', b'"classifier.bia_"', 1))
    out = classify(tmp_path, model, "hello")
    assert out.returncode == 1
    assert b"model.safetensors' has no tensor 'classifier.bias'" in out.stderr


def test_model_inspect_describes_the_checkpoint():
    out = subprocess.run([BIN, "model", "inspect", os.path.join(FIXTURES, "roberta-f32")],
                         capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["architecture"] == "RobertaForSequenceClassification"
    assert (info["hidden_size"], info["num_hidden_layers"], info["num_attention_heads"]) == (64, 2, 4)
    # Positions start at pad_token_id + 1 = 2: two fewer tokens than max_position_embeddings.
    assert info["max_tokens"] == 62
    assert info["labels"] == ["code", "math", "chat"]
    assert info["tokenizer"]["model"] == "WordPiece"
    # Every tensor of the file, counted: what PyTorch's model.parameters() holds.
    assert info["parameters"] == 89667


def edited_copy(tmp_path, fixture, file, key, value):
    """A copy of the fixture directory with one key of its JSON `file` changed."""
    copy = tmp_path / fixture
    shutil.copytree(os.path.join(FIXTURES, fixture), copy)
    config = json.loads((copy / file).read_text())
    config[key] = value
    (copy / file).write_text(json.dumps(config))
    return copy


def test_model_inspect_of_a_damaged_checkpoint_names_the_tensor(tmp_path):
    model = edited_copy(tmp_path, "bert-f32", "config.json", "hidden_size", 32)
    out = subprocess.run([BIN, "model", "inspect", str(model)], capture_output=True, timeout=60)
    assert out.returncode == 1
    assert b"tensor 'bert.embeddings.word_embeddings.weight' is 220\xc3\x9764, expected 220\xc3\x9732" in out.stderr


def test_classify_runs_a_modernbert_checkpoint(tmp_path):
    reference = json.load(open(os.path.join(FIXTURES, "modernbert-reference.json")))
    for name in ("modernbert", "mmbert"):
        for i in (2, 19):
            out = classify(tmp_path, os.path.join(FIXTURES, name + "-f32"), reference["texts"][i])
            assert out.returncode == 0, out.stderr
            result = json.loads(out.stdout)
            want = softmax(reference["models"][name]["logits"][i])
            assert max(abs(a - b) for a, b in zip(result["probabilities"], want)) < 1e-4


def test_model_inspect_describes_an_mmbert_checkpoint():
    out = subprocess.run([BIN, "model", "inspect", os.path.join(FIXTURES, "mmbert-f32")],
                         capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["architecture"] == "ModernBertForSequenceClassification"
    assert info["family"] == "modernbert"
    assert (info["hidden_size"], info["num_hidden_layers"], info["num_attention_heads"]) == (64, 3, 4)
    # global_attn_every_n_layers 3: layer 0 global, 1 and 2 a window of ±8.
    assert (info["global_layers"], info["local_attention"]) == (1, 16)
    assert info["global_rope"] == {"theta": 160000.0, "type": "yarn", "factor": 4.0,
                                   "original_max_position_embeddings": 32.0}
    assert info["local_rope"]["type"] == "yarn"
    assert info["classifier_pooling"] == "mean"
    assert info["max_tokens"] == 128
    assert info["labels"] == ["code", "math", "chat"]
    assert info["parameters"] == 125443  # every tensor of model.safetensors


def test_model_inspect_merges_an_adapter_and_shows_the_loading_progress():
    out = subprocess.run([BIN, "model", "inspect", os.path.join(FIXTURES, "bert-f32"),
                          "--adapter", os.path.join(FIXTURES, "bert-lora")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["labels"] == ["code", "math", "chat"]
    # Not a terminal: one line per tenth of the bytes read, the last one full.
    bars = [line for line in out.stderr.splitlines() if line.startswith("loading [")]
    assert len(bars) >= 2, out.stderr
    assert bars[-1].startswith("loading [" + "#" * 30 + "] 0.4 MB/0.4 MB"), bars


def test_model_inspect_of_a_mismatched_adapter_names_the_tensor(tmp_path):
    adapter = edited_copy(tmp_path, "bert-lora", "adapter_config.json", "r", 8)
    out = subprocess.run([BIN, "model", "inspect", os.path.join(FIXTURES, "bert-f32"),
                          "--adapter", str(adapter)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert f"has rank 4 but '{adapter}/adapter_config.json' says r 8" in out.stderr


# A child's ru_maxrss counts what it held before exec: a fork of this pytest process, 100 MB or
# more late in the run. So a fresh small Python starts the command and reports its peak.
MEASURE = """import resource, subprocess, sys
run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(run.stderr)
print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss_mb(args):
    """Runs the command; its exit code, stderr and peak resident set in MB."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, timeout=60)
    code, kb = out.stdout.split()
    return int(code), out.stderr, int(kb) / 1024


def write_safetensors(path, entries, data):
    header = json.dumps(entries).encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header + data)


def test_model_inspect_refuses_overlapping_tensors_within_a_memory_bound(tmp_path):
    # Issue 47: 300 header entries naming the same 1 MiB of a 1.07 MB file drove `model inspect`
    # to 629 MB RSS, every entry read into its own copy. The format's own rule (the tensors' byte
    # ranges tile the data) refuses such a file before any tensor is read.
    model = tmp_path / "overlapping"
    shutil.copytree(os.path.join(FIXTURES, "bert-f32"), model)
    mib = 1 << 20
    entries = {f"t{i}": {"dtype": "F32", "shape": [mib // 4], "data_offsets": [0, mib]}
               for i in range(300)}
    write_safetensors(model / "model.safetensors", entries, bytes(mib))
    code, stderr, rss = peak_rss_mb([BIN, "model", "inspect", str(model)])
    assert code == 1
    assert b"tensor 't1' [0, 1048576) overlaps tensor 't0' [0, 1048576)" in stderr, stderr
    # The same command on the fixture it was copied from peaks at 13 MB here; this file took it
    # to 321 MB before the check.
    assert rss < 64, f"{rss:.0f} MB"


def test_model_inspect_refuses_data_that_no_tensor_covers(tmp_path):
    model = tmp_path / "gap"
    shutil.copytree(os.path.join(FIXTURES, "bert-f32"), model)
    entries = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
               "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}}
    write_safetensors(model / "model.safetensors", entries, bytes(32))
    out = subprocess.run([BIN, "model", "inspect", str(model)], capture_output=True, timeout=60)
    assert out.returncode == 1
    assert b"the data has a gap: bytes [8, 16) belong to no tensor" in out.stderr
