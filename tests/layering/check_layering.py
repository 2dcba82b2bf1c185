#!/usr/bin/env python3
"""Fails when a source includes a header of a layer it may not use.

The rule is the CMake graph: src/CMakeLists.txt declares each layer with the layers it links,
and writes them to <build>/layers.json. A layer may include its own headers and those of every
layer it reaches through those edges. The compiler already refuses a back-edge (each layer sees
only its own header view and those of the layers below); this check names the offending line,
and also covers the run-time modules and files the compiler never sees together.

usage: check_layering.py BUILD_DIR/layers.json [--also LAYER=FILE ...]
  --also: check FILE as if it belonged to LAYER (the test that this check can fail).
"""
import argparse
import json
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

# The run-time modules and the facades, which are not layers of the library but follow the
# same rule: the sentencepiece shim implements tokenizers/sentencepiece_shim.h; the libtorch
# plugin builds on the learned layer; the CLI and the C ABI may use everything.
EXTRA = {
    "spm_shim": {"internal": "tokenizers/spm_shim", "depends": ["tokenizers"]},
    "torch_plugin": {"internal": "learned/torch_plugin", "depends": ["learned"]},
    "cli": {"internal": "cli", "depends": ["*"]},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("layers_json")
    ap.add_argument("--also", action="append", default=[])
    args = ap.parse_args()
    spec = json.loads(pathlib.Path(args.layers_json).read_text())
    root = pathlib.Path(spec["source_dir"])
    layers = {name: dict(v) for name, v in spec["layers"].items()}
    for name, v in EXTRA.items():
        layers[name] = {"public": "", **v}

    def closure(name, seen=None):
        seen = set() if seen is None else seen
        if name in seen:
            return seen
        seen.add(name)
        for dep in layers[name]["depends"]:
            if dep == "*":
                seen.update(layers)
            else:
                closure(dep, seen)
        return seen

    allowed = {name: closure(name) for name in layers}

    # Header prefixes to layers, longest first: "mcpclass/transport/server/" before
    # "mcpclass/transport/", "learned/torch_plugin/" before "learned/".
    prefixes = []
    for name, v in layers.items():
        if v.get("public"):
            prefixes.append(("mcpclass/" + v["public"] + "/", name))
        if v.get("internal"):
            prefixes.append((v["internal"] + "/", name))
    prefixes.append(("mcpclass/version.hpp", "util"))
    prefixes.sort(key=lambda p: len(p[0]), reverse=True)

    def layer_of_header(path):
        for prefix, name in prefixes:
            if path.startswith(prefix) or path == prefix:
                return name
        return None

    def owner_of(rel):
        if rel.startswith("include/"):
            return layer_of_header(rel[len("include/"):])
        if rel.startswith("src/"):
            return layer_of_header(rel[len("src/"):])
        return None

    files = []
    for pattern in ("include/mcpclass/**/*.hpp", "src/**/*.cpp", "src/**/*.hpp", "src/**/*.h"):
        files += sorted(root.glob(pattern))
    checks = [(f, owner_of(f.relative_to(root).as_posix())) for f in files]
    for item in args.also:
        name, _, path = item.partition("=")
        if name not in layers:
            sys.exit(f"--also: no layer named {name!r}")
        checks.append((pathlib.Path(path), name))

    problems, includes = [], 0
    for path, owner in checks:
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        if owner is None:
            problems.append(f"{shown}: belongs to no layer (add its folder to src/CMakeLists.txt)")
            continue
        text = path.read_text(encoding="utf-8")
        for match in INCLUDE.finditer(text):
            target = layer_of_header(match.group(1))
            if target is None:
                continue  # a system or third-party header, or one next to the file
            includes += 1
            if target not in allowed[owner]:
                line = text.count("\n", 0, match.start()) + 1
                may = ", ".join(sorted(allowed[owner]))
                problems.append(f"{shown}:{line}: layer {owner} includes \"{match.group(1)}\" of "
                                f"layer {target}; {owner} may use only: {may}")
    for p in problems:
        print(p)
    print(f"layering: {len(checks)} files, {includes} project includes, {len(problems)} problems "
          f"({len(spec['layers'])} layers)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
