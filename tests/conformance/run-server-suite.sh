#!/usr/bin/env bash
# Runs the official MCP server conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against the conformance fixture over Streamable HTTP.
#
# Usage: run-server-suite.sh FIXTURE_BINARY [--stateless] [extra run-conformance.sh options]
#   default extra options: --suite all
# Installs the pinned npm packages into tests/conformance/node_modules once (npm ci; skipped when
# present), starts the fixture on a free port of 127.0.0.1, runs the suite, stops the fixture.
# Exit: non-zero when a scenario failed (or on setup errors). The last line is "N passed, M failed".
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 1 ] || { sed -n '2,10p' "$0"; exit 2; }
FIXTURE="$1"; shift
[ -x "$FIXTURE" ] || { echo "fixture not executable: $FIXTURE" >&2; exit 2; }
MODE=()
if [ "${1:-}" = "--stateless" ]; then MODE=(--stateless); shift; fi
EXTRA=("$@")
[ ${#EXTRA[@]} -gt 0 ] || EXTRA=(--suite all)

if [ ! -f "$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || { echo "npm ci failed" >&2; exit 2; }
fi

OUT="$(mktemp "${TMPDIR:-/tmp}/mcpfixture.XXXXXX")"
"$FIXTURE" --http 127.0.0.1:0 "${MODE[@]}" >"$OUT" 2>"$OUT.err" &
PID=$!
cleanup() {
  kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -f "$OUT" "$OUT.err"
}
trap cleanup EXIT

URL=""
for _ in $(seq 1 100); do
  URL="$(head -n1 "$OUT" 2>/dev/null)"
  [ -n "$URL" ] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "fixture did not start:" >&2; cat "$OUT.err" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
echo "fixture ${MODE[*]:-(stateful)} at $URL"
"$HERE/run-conformance.sh" "$URL" "${EXTRA[@]}"
