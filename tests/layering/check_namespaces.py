#!/usr/bin/env python3
"""Fails when a layer's code is outside the namespace named after the layer.

A layer's headers (include/mcpclass/<dir>/) and sources (src/<dir>/) define things only in
mcpclass::<namespace> or a namespace nested in it (its `detail`). A block that only
forward-declares another layer's types (`namespace mcpclass::auth { struct OAuthOptions; }`) is
allowed. LAYERS lists every layer with its namespace.

usage: check_namespaces.py SOURCE_DIR [--also LAYER=FILE ...]
  --also: check FILE as if it belonged to LAYER (the test that this check can fail).
"""
import argparse
import pathlib
import re
import sys

# layer directory (include/mcpclass/<dir>, src/<dir>) -> its namespace under mcpclass::
LAYERS = {d: d for d in ("util", "jsonrpc", "protocol", "server", "client", "net", "auth",
                         "classify", "kernels", "checkpoint", "tokenizers", "architectures",
                         "learned", "remote", "routing", "config", "service", "route")}
LAYERS |= {"transport/server": "transport::server", "transport/client": "transport::client"}

OPEN = re.compile(r"^namespace (mcpclass(?:::\w+)*) \{", re.M)
FORWARD = re.compile(r"^\s*(?:(?:struct|class|enum class|enum struct) \w+(?: : \w+)?;)?\s*(?://.*)?$")


def block_body(text, start):
    """The text between the `{` at `start` and its matching `}`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


def problems(path, namespace, shown):
    text = path.read_text(errors="replace")
    want = "mcpclass::" + namespace
    for m in OPEN.finditer(text):
        name = m.group(1)
        if name == want or name.startswith(want + "::"):
            continue
        body = block_body(text, m.end() - 1)
        if all(FORWARD.match(line) for line in body.splitlines()):
            continue  # forward declarations of another layer's types
        line = text.count("\n", 0, m.start()) + 1
        yield f"{shown}:{line}: namespace {name} in layer {namespace}; its code belongs in {want}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source_dir")
    ap.add_argument("--also", action="append", default=[])
    args = ap.parse_args()
    root = pathlib.Path(args.source_dir)
    files = []
    for layer, namespace in LAYERS.items():
        for base in (root / "include" / "mcpclass" / layer, root / "src" / layer):
            files += [(p, namespace) for p in sorted(base.rglob("*"))
                      if p.suffix in (".hpp", ".cpp", ".h")]
    for spec in args.also:
        layer, _, file = spec.partition("=")
        files.append((pathlib.Path(file), LAYERS[layer]))
    found = []
    for path, namespace in files:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        found += problems(path, namespace, shown)
    for p in found:
        print(p)
    print(f"{len(files)} files of {len(LAYERS)} layers: {len(found)} outside their namespace")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
