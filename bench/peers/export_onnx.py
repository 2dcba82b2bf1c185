#!/usr/bin/python3
"""Exports the learned default (models/mmlu14.yaml) to ONNX for the ONNX Runtime peer
(bench/peers/server.mjs --onnx): the USE-lite encoder from its TorchScript module (encoder.pt,
forward(ids int64[B,T], mask int64[B,T]) -> float[B,512]) and the trained head
(heads/mmlu14.safetensors + .json, format 2: src/learned/head_model.hpp) as one graph

    model.onnx:   ids int64[B,T], mask int64[B,T] -> probabilities float[B,C], embedding float[B,512]
    encoder.onnx: ids int64[B,T], mask int64[B,T] -> embedding float[B,512]   (the forward alone)

with dynamic batch and length axes. The head is the same formula as the library's, lexical part
included (tf-idf over the token ids in the mask), so the peer serves the same model:

    p_dense = softmax(MLP(e) / T_dense)
    x_v     = log(1 + count_v) · idf_v,  x /= |x|
    p_lex   = softmax((W·x + b) / T_lex)
    p       = softmax(log((1 − λ)·p_dense + λ·p_lex) / T_mix)

The export is cached under ${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/mcpclass}/onnx/KEY/,
KEY the sha256 of the head, its manifest, the encoder and this exporter's format, so a retrained
head gets a new export and a rerun is instant. Prints the directory. Before writing it checks
the exported graph's torch twin against the TF.js reference embeddings (models/use-lite/
reference.json); bench/onnx_peer.py checks the ONNX Runtime outputs against mcpclass.

Needs /usr/bin/python3 with the Debian packages python3-torch and python3-onnx.
usage: bench/peers/export_onnx.py [--head H.safetensors] [--encoder encoder.pt] [--force]"""
import argparse
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import warnings

FORMAT = "mcpclass-onnx-2"  # bump when the exported graph changes
OPSET = 16  # ScatterElements with reduction="add"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_dir():
    if os.environ.get("MCPCLASS_CACHE_DIR"):
        return os.environ["MCPCLASS_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpclass")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_safetensors(path):
    """{name: float32 torch tensor} of a safetensors file (F32 tensors only, as mcpclass writes)."""
    import torch
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"export_onnx: {path}: tensor {name} is {t['dtype']}, expected F32")
        begin, end = t["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32).reshape(t["shape"])
    return out


def build(encoder_path, head_path):
    """(manifest, encoder, model): the TorchScript encoder as loaded, and the encoder + head as
    one scripted module (torch.onnx traces no call into a loaded ScriptModule, so both go to
    the exporter as TorchScript)."""
    import torch
    from typing import Tuple

    manifest = json.load(open(head_path + ".json"))
    tensors = read_safetensors(head_path)
    encoder = torch.jit.load(encoder_path).eval()

    def linear(w, b):
        layer = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            layer.weight.copy_(w)
            layer.bias.copy_(b)
        return layer

    layers = []
    while f"w{len(layers)}" in tensors:
        layers.append(linear(tensors[f"w{len(layers)}"], tensors[f"b{len(layers)}"]))
    if not layers:
        raise SystemExit(f"export_onnx: {head_path} has no layers (w0, b0)")
    lex = manifest.get("lexical")
    lexical = lex is not None and float(lex["mix"]) > 0
    classes = len(manifest["categories"])

    class Model(torch.nn.Module):
        lexical: bool
        t_dense: float
        mix: float
        t_lex: float
        t_mix: float

        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.hidden = torch.nn.ModuleList(layers[:-1])
            self.out = layers[-1]
            self.t_dense = float(manifest["temperature"])
            self.lexical = lexical
            self.mix = float(lex["mix"]) if lexical else 0.0
            self.t_lex = float(lex["temperature"]) if lexical else 1.0
            self.t_mix = float(lex["mix_temperature"]) if lexical else 1.0
            if lexical:
                self.lex = linear(tensors["lex_w"], tensors["lex_b"])
                self.register_buffer("idf", tensors["lex_idf"].clone())
            else:
                self.lex = torch.nn.Linear(1, classes)
                self.register_buffer("idf", torch.ones(1))

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
            e = self.encoder(ids, mask)
            h = e
            for layer in self.hidden:
                h = torch.relu(layer(h))
            p = torch.softmax(self.out(h) / self.t_dense, dim=1)
            if not self.lexical:
                return p, e
            # The library truncates to max_tokens (128) before both parts; the encoder module
            # slices to 128 itself, the bag does here. Ids outside the idf table are ignored.
            ids = ids[:, :128]
            mask = mask[:, :128]
            vocabulary = self.idf.shape[0]
            valid = (mask > 0) & (ids >= 0) & (ids < vocabulary)
            index = ids * valid.to(torch.int64)  # masked-out ids count (0 times) at 0
            counts = torch.zeros([ids.shape[0], vocabulary], dtype=torch.float32)
            counts = counts.scatter_add(1, index, valid.to(torch.float32))
            x = torch.log1p(counts) * self.idf
            x = x / torch.clamp(torch.sqrt(torch.sum(x * x, dim=1, keepdim=True)), min=1e-9)
            p_lex = torch.softmax(self.lex(x) / self.t_lex, dim=1)
            mixed = (1.0 - self.mix) * p + self.mix * p_lex
            return torch.softmax(torch.log(torch.clamp(mixed, min=1e-30)) / self.t_mix, dim=1), e

    return manifest, encoder, torch.jit.script(Model().eval())


def check_reference(model, reference_path):
    """The torch twin of model.onnx against the TF.js embeddings of reference.json; returns the
    largest absolute difference (the encoder is the one mcpclass converted: ~2e-6)."""
    import torch
    ref = json.load(open(reference_path))
    worst = 0.0
    with torch.no_grad():
        for item in ref["items"]:
            ids = torch.tensor([item["ids"]], dtype=torch.int64)
            _, e = model(ids, torch.ones_like(ids))
            worst = max(worst, float((e[0] - torch.tensor(item["embedding"])).abs().max()))
    return worst


def export(module, path, outputs):
    import torch
    ids = torch.tensor([[379, 18, 9, 6853, 14, 649, 1848, 655, 216, 152, 54],
                        [379, 18, 9, 6853, 14, 0, 0, 0, 0, 0, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    axes = {"ids": {0: "batch", 1: "tokens"}, "mask": {0: "batch", 1: "tokens"}}
    axes.update({name: {0: "batch"} for name in outputs})
    with torch.no_grad():
        torch.onnx.export(module, (ids, mask), path, input_names=["ids", "mask"],
                          output_names=outputs, dynamic_axes=axes, opset_version=OPSET,
                          do_constant_folding=True)
    import onnx
    onnx.checker.check_model(onnx.load(path))


def main():
    cache = cache_dir()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--head", default=os.path.join(cache, "heads", "mmlu14.safetensors"))
    ap.add_argument("--encoder", default=os.path.join(cache, "use-lite", "encoder.pt"))
    ap.add_argument("--reference", default=os.path.join(ROOT, "models", "use-lite", "reference.json"))
    ap.add_argument("--force", action="store_true", help="export again even when cached")
    args = ap.parse_args()
    for p in (args.head, args.head + ".json", args.encoder):
        if not os.path.exists(p):
            raise SystemExit(f"export_onnx: {p} is missing (models/setup.sh prepares it)")

    sums = {"head": sha256(args.head), "head_manifest": sha256(args.head + ".json"),
            "encoder": sha256(args.encoder)}
    key = hashlib.sha256((FORMAT + "\n" + json.dumps(sums, sort_keys=True)).encode()).hexdigest()[:16]
    out = os.path.join(cache, "onnx", key)
    if not args.force and os.path.exists(os.path.join(out, "model.json")):
        print(out)
        return

    try:
        import onnx  # noqa: F401
        import torch
    except ImportError as e:
        raise SystemExit(f"export_onnx: {e}: apt-get install python3-torch python3-onnx "
                         "(and run this with /usr/bin/python3)")
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning)  # the exporter's shape notes
    manifest, encoder, model = build(args.encoder, args.head)
    worst = check_reference(model, args.reference)
    if worst > 1e-4:
        raise SystemExit(f"export_onnx: the encoder differs from the TF.js reference by {worst}")
    os.makedirs(os.path.join(cache, "onnx"), exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{key}.", dir=os.path.join(cache, "onnx"))
    try:
        export(model, os.path.join(work, "model.onnx"), ["probabilities", "embedding"])
        export(encoder, os.path.join(work, "encoder.onnx"), ["embedding"])
        info = {"format": FORMAT, "opset": OPSET, "torch": torch.__version__,
                "categories": manifest["categories"], "max_tokens": 128,
                "lexical": manifest.get("lexical"), "temperature": manifest["temperature"],
                "sources": {"head": args.head, "encoder": args.encoder}, "sha256": sums,
                "reference_max_abs_diff": worst}
        with open(os.path.join(work, "model.json"), "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        os.chmod(work, 0o755)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    # Exports of this head file before it was retrained are superseded (~60 MB each).
    for old in os.listdir(os.path.join(cache, "onnx")):
        meta = os.path.join(cache, "onnx", old, "model.json")
        if old != key and os.path.exists(meta):
            with open(meta) as f:
                if json.load(f).get("sources", {}).get("head") == args.head:
                    shutil.rmtree(os.path.dirname(meta), ignore_errors=True)
    print(f"export_onnx: wrote {out} (encoder vs TF.js reference: max |Δ| {worst:.2g})",
          file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
