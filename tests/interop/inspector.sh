#!/usr/bin/env bash
# Interop with a third-party MCP client: the official Inspector CLI
# (@modelcontextprotocol/inspector-cli, pinned in tests/conformance/package.json) lists the tools of
# `mcpclass serve` and calls classify_text (plus list_categories) over stdio, Streamable HTTP
# (/mcp) and legacy HTTP+SSE (/sse), asserting on its output: the tool names in order, class 0
# (math) for a math query with a normalized distribution, and the category list.
#
# Usage: inspector.sh MCPCLASS_BINARY
# Installs the pinned npm packages into tests/conformance/node_modules once (npm ci; the same step
# as tests/conformance/run-server-suite.sh). Exit: 0 when every check passed.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONF="$HERE/../conformance"
[ $# -eq 1 ] || { sed -n '2,10p' "$0"; exit 2; }
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # absolute: the CLI runs from its build dir
[ -x "$BIN" ] || { echo "not executable: $BIN" >&2; exit 2; }
PY=/usr/bin/python3

INSPECTOR_DIR="$CONF/node_modules/@modelcontextprotocol/inspector-cli/build"
if [ ! -f "$INSPECTOR_DIR/index.js" ]; then
  (cd "$CONF" && npm ci --no-audit --no-fund --loglevel=error) || { echo "npm ci failed" >&2; exit 2; }
fi
# The Inspector CLI looks for ../package.json relative to the cwd: run it from its build dir.
inspector() { (cd "$INSPECTOR_DIR" && timeout 60 node index.js "$@"); }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpinspector.XXXXXX")"
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

PASS=0
FAIL=0
check() {  # check NAME PYTHON_ASSERTIONS_ON_doc -- reads the inspector output from $TMP/out
  local name="$1" code="$2"
  if "$PY" -c "
import json, math, sys
doc = json.load(open(sys.argv[1]))
$code
" "$TMP/out" 2>"$TMP/err"; then
    PASS=$((PASS + 1)); echo "ok   $name"
  else
    FAIL=$((FAIL + 1)); echo "FAIL $name"; sed 's/^/     /' "$TMP/err"; head -c 2000 "$TMP/out"; echo
  fi
}

LIST_CHECK='names = [t["name"] for t in doc["tools"]]
assert names == ["classify_text", "list_categories"], names
schema = doc["tools"][0]["inputSchema"]
assert schema["required"] == ["text"], schema'
CALL_CHECK='assert doc.get("isError") is False, doc
wire = json.loads(doc["content"][0]["text"])
assert wire == doc["structuredContent"], (wire, doc["structuredContent"])
assert wire["class"] == 0, wire
assert 0.5 < wire["confidence"] <= 1, wire
p = wire["probabilities"]
assert abs(sum(p) - 1) < 1e-6 and max(p) == p[0], p
assert abs(wire["entropy"] + sum(x * math.log2(x) for x in p if x > 0)) < 1e-6, wire
assert isinstance(wire["use_reasoning"], bool) and wire["model"], wire'
CATS_CHECK='cats = doc["structuredContent"]["categories"]
assert cats[0] == "math" and len(cats) >= 2, cats'

run_all() {  # run_all LABEL TARGET... (the server: a URL plus --transport, or a command)
  local label="$1"; shift
  inspector "$@" --method tools/list >"$TMP/out" 2>"$TMP/stderr" || cat "$TMP/stderr" >&2
  check "$label tools/list" "$LIST_CHECK"
  inspector "$@" --method tools/call --tool-name classify_text \
    --tool-arg "text=What is the integral of x^2 from 0 to 3?" --tool-arg with_probabilities=true \
    >"$TMP/out" 2>"$TMP/stderr" || cat "$TMP/stderr" >&2
  check "$label tools/call classify_text" "$CALL_CHECK"
  inspector "$@" --method tools/call --tool-name list_categories >"$TMP/out" 2>"$TMP/stderr" ||
    cat "$TMP/stderr" >&2
  check "$label tools/call list_categories" "$CATS_CHECK"
}

# stdio: the Inspector spawns the server itself.
run_all stdio "$BIN" serve --stdio

# HTTP: one server on an ephemeral port for both Streamable HTTP and legacy SSE.
"$BIN" serve --http 127.0.0.1:0 2>"$TMP/serve.err" &
PID=$!
PORT=""
for _ in $(seq 1 300); do
  PORT="$(sed -n 's|.* on http://127\.0\.0\.1:\([0-9]*\)/mcp.*|\1|p' "$TMP/serve.err" | head -n1)"
  [ -n "$PORT" ] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$PORT" ]; then
  echo "FAIL server did not start:"; cat "$TMP/serve.err"
  FAIL=$((FAIL + 1))
else
  run_all streamable-http "http://127.0.0.1:$PORT/mcp" --transport http
  run_all sse "http://127.0.0.1:$PORT/sse" --transport sse
  # The server survived all of it and counted the two classifications.
  if curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics" 2>&1 &&
     grep -q '^mcpclass_classifications_total{category="math"} 2$' "$TMP/metrics"; then
    PASS=$((PASS + 1)); echo "ok   metrics after the HTTP and SSE calls"
  else
    FAIL=$((FAIL + 1)); echo "FAIL metrics after the HTTP and SSE calls"; grep classif "$TMP/metrics"
  fi
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ] && [ "$PASS" -gt 0 ]
