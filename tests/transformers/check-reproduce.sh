#!/usr/bin/env bash
# The committed fixtures are exactly what make_fixtures.py writes: regenerate them in a temporary
# directory and compare every file. Exit 77 (skipped) without Debian's python3-torch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch is not installed"; exit 77; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$here/make_fixtures.py" --out "$out"
diff -r "$here/fixtures" "$out"
echo "the fixtures reproduce"
