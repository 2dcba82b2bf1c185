"""`mcpclass model pull` against a local stand-in for the Hugging Face Hub (hub_server.py, on
127.0.0.1): a full pull into the hub's cache layout (blobs, snapshots of relative symlinks,
refs) that `model: hf://ORG/NAME` then serves from, a pull resumed after a broken download, a
file refused by its published checksum, a gated repository without and with a token, missing
repositories and revisions, HF_ENDPOINT and HF_HUB_CACHE honoured."""
import hashlib
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from hub_server import Hub, Repo, git_blob_id  # noqa: E402
from test_cli import BIN  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "transformers", "fixtures", "bert-f32")


def checkpoint_files():
    files = {}
    for name in sorted(os.listdir(FIXTURE)):
        with open(os.path.join(FIXTURE, name), "rb") as f:
            files[name] = f.read()
    files["README.md"] = b"# a model card\n"
    files["pytorch_model.bin"] = b"other weights mcpclass does not read"
    files["1_Pooling/config.json"] = b'{"word_embedding_dimension": 64}\n'
    return files


def pull(env, *args):
    return subprocess.run([BIN, "model", "pull", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.fixture
def hub():
    repos = {
        "acme/tiny-bert": Repo(checkpoint_files(), lfs={"model.safetensors"}),
        "acme/gated": Repo({"config.json": b"{}\n"}, gated_token="hf_secret"),
    }
    with Hub(repos) as h:
        yield h


@pytest.fixture
def env(tmp_path, hub):
    e = dict(os.environ)
    for key in ("HF_TOKEN", "HF_HOME", "HF_ENDPOINT", "HF_HUB_CACHE"):
        e.pop(key, None)
    e["HF_ENDPOINT"] = hub.url
    e["HF_HUB_CACHE"] = str(tmp_path / "hub")
    return e


def test_a_pull_fills_the_hub_cache_and_a_config_reads_it(hub, env, tmp_path):
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 0, p.stderr
    repo = hub.repos["acme/tiny-bert"]
    snapshot = tmp_path / "hub" / "models--acme--tiny-bert" / "snapshots" / repo.sha
    assert p.stdout.strip() == str(snapshot)
    assert (tmp_path / "hub" / "models--acme--tiny-bert" / "refs" / "main").read_text() == repo.sha
    # What mcpclass reads, not the other formats' weights nor the card.
    assert sorted(str(f.relative_to(snapshot)) for f in snapshot.rglob("*") if not f.is_dir()) == [
        "1_Pooling/config.json", "config.json", "model.safetensors", "tokenizer.json",
        "tokenizer_config.json"]
    for name in ("config.json", "model.safetensors", "1_Pooling/config.json"):
        link = snapshot / name
        assert link.is_symlink() and not os.path.isabs(os.readlink(link))
        assert link.read_bytes() == repo.files[name]
    blobs = tmp_path / "hub" / "models--acme--tiny-bert" / "blobs"
    assert (blobs / hashlib.sha256(repo.files["model.safetensors"]).hexdigest()).exists()
    assert (blobs / git_blob_id(repo.files["config.json"])).exists()
    # A second pull fetches nothing again.
    storage_before = sum(1 for m, path, _ in hub.requests if path.startswith("/storage/"))
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 0, p.stderr
    assert sum(1 for m, path, _ in hub.requests if path.startswith("/storage/")) == storage_before
    # model: hf://ORG/NAME resolves from the cache.
    config = tmp_path / "c.yaml"
    config.write_text("classifier:\n  kind: transformer\n  model: hf://acme/tiny-bert\n")
    c = subprocess.run([BIN, "classify", "--config", str(config), "write a python function"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert c.returncode == 0, c.stderr
    assert '"class"' in c.stdout
    # --all takes every file.
    p = pull(env, "acme/tiny-bert", "--all")
    assert p.returncode == 0, p.stderr
    assert (snapshot / "README.md").read_bytes() == repo.files["README.md"]


def test_a_broken_download_resumes_where_it_stopped(hub, env, tmp_path):
    data = hub.repos["acme/tiny-bert"].files["model.safetensors"]
    sha = hashlib.sha256(data).hexdigest()
    hub.cut_after[sha] = 4096
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 1
    assert "run the pull again to resume" in p.stderr, p.stderr
    partial = tmp_path / "hub" / "models--acme--tiny-bert" / "blobs" / (sha + ".incomplete")
    assert partial.stat().st_size == 4096
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 0, p.stderr
    ranges = [h.get("Range") for _, path, h in hub.requests if path.startswith(f"/storage/{sha}")]
    assert ranges[-1] == "bytes=4096-"
    assert not partial.exists()
    snapshot = p.stdout.strip()
    assert open(os.path.join(snapshot, "model.safetensors"), "rb").read() == data


def test_a_file_that_does_not_match_its_published_checksum_is_not_kept(hub, env, tmp_path):
    data = hub.repos["acme/tiny-bert"].files["model.safetensors"]
    sha = hashlib.sha256(data).hexdigest()
    hub.corrupt.add(sha)
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 1
    assert f"not the {sha} the hub published: not kept" in p.stderr, p.stderr
    blobs = tmp_path / "hub" / "models--acme--tiny-bert" / "blobs"
    assert not (blobs / sha).exists() and not (blobs / (sha + ".incomplete")).exists()


def test_a_gated_repository_needs_its_token(hub, env):
    p = pull(env, "acme/gated")
    assert p.returncode == 1
    assert "'acme/gated' needs authorization (a gated or private repository): set HF_TOKEN" in p.stderr
    p = pull(env, "acme/gated", "--token", "hf_wrong")
    assert p.returncode == 1 and "the token may not read 'acme/gated'" in p.stderr, p.stderr
    env["HF_TOKEN"] = "hf_secret"
    p = pull(env, "acme/gated")
    assert p.returncode == 0, p.stderr
    sent = [h.get("Authorization") for _, path, h in hub.requests if "acme/gated" in path]
    assert sent[-1] == "Bearer hf_secret"


@pytest.mark.parametrize("repo,words", [
    ("acme/nothing", "repository 'acme/nothing' not found at http://127.0.0.1:"),
    ("acme/tiny-bert@v9", "revision 'v9' of 'acme/tiny-bert' not found"),
    ("not-a-repo", "'not-a-repo' is not a Hub model id: ORG/NAME[@REVISION]"),
])
def test_missing_repositories_and_revisions_are_named(env, repo, words):
    p = pull(env, repo)
    assert p.returncode == 1 and words in p.stderr, p.stderr


def test_a_config_never_downloads(env, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("classifier:\n  kind: transformer\n  model: hf://acme/tiny-bert\n")
    c = subprocess.run([BIN, "classify", "--config", str(config), "hello"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert c.returncode != 0
    assert "is not in the Hugging Face cache" in c.stderr
    assert "mcpclass model pull acme/tiny-bert" in c.stderr


def test_the_endpoint_flag_beats_hf_endpoint(hub, env):
    env["HF_ENDPOINT"] = "http://127.0.0.1:1"
    p = pull(env, "acme/tiny-bert")
    assert p.returncode == 1 and "127.0.0.1:1" in p.stderr
    p = pull(env, "acme/tiny-bert", "--endpoint", hub.url)
    assert p.returncode == 0, p.stderr
