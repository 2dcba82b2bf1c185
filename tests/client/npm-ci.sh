#!/usr/bin/env bash
# Installs the pinned MCP peers (tests/conformance/package.json) once into
# tests/conformance/node_modules. Shared with the server suite: an flock serialises installs.
set -euo pipefail
CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")/../conformance" && pwd)"
MARKER="$CONF/node_modules/@modelcontextprotocol/server-everything/package.json"
[ -f "$MARKER" ] && [ -f "$CONF/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] && exit 0
command -v npm >/dev/null || { echo "npm not found" >&2; exit 2; }
exec 9>"${TMPDIR:-/tmp}/mcpclass-npm-ci.lock"
flock 9
[ -f "$MARKER" ] && exit 0
(cd "$CONF" && npm ci --no-audit --no-fund >&2)
