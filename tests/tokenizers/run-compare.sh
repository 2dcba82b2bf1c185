#!/usr/bin/env bash
# ctest driver: compares `mcpclass tokenize` with the reference Hugging Face tokenizers (npm
# `tokenizers`, pinned in package.json, installed here once with npm ci) on one fixture.
#
# Usage: run-compare.sh MCPCLASS_BIN FIXTURE_NAME [compare.mjs options]
# Exits 77 (skipped) when no Node 20+ can be had; 1 naming the first differing text.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { sed -n '2,6p' "$0"; exit 2; }
BIN="$1"; NAME="$2"; shift 2
NODE_DIR="$("$HERE/../../scripts/node-for-tests.sh" || true)"
if [ -z "$NODE_DIR" ]; then
  echo "SKIPPED: no Node.js 20+ (scripts/node-for-tests.sh); the reference tokenizers need it"
  exit 77
fi
export PATH="$NODE_DIR:$PATH"
if [ ! -f "$HERE/node_modules/tokenizers/package.json" ]; then
  exec 9>"${TMPDIR:-/tmp}/mcpclass-npm-ci-tokenizers.lock"
  flock 9
  [ -f "$HERE/node_modules/tokenizers/package.json" ] ||
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
exec node "$HERE/compare.mjs" "$BIN" "$HERE/fixtures/$NAME.json" "$@"
