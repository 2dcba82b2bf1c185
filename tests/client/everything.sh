#!/usr/bin/env bash
# `mcpclass call` against the reference server @modelcontextprotocol/server-everything (pinned in
# tests/conformance/package.json) over stdio, Streamable HTTP and legacy SSE: list tools, call
# echo and get-sum, list and read a resource, get a prompt. Ends with "N passed, M failed".
# Usage: everything.sh PATH/TO/mcpclass [stdio] [http] [sse]
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$1"; shift
TRANSPORTS=("$@"); [ ${#TRANSPORTS[@]} -eq 0 ] && TRANSPORTS=(stdio http sse)
"$HERE/npm-ci.sh" || exit 2
EVERYTHING="$HERE/../conformance/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PASS=0; FAIL=0; SERVER_PID=""
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; }
trap stop_server EXIT

# check NAME EXPECTED-SUBSTRING call-arguments...
check() {
  local name="$1" expected="$2"; shift 2
  local out
  out="$("$BIN" call --timeout 20 "${TARGET[@]}" "$@" 2>"$WORK/err")"
  if [ $? -eq 0 ] && [[ "$out" == *"$expected"* ]]; then
    PASS=$((PASS + 1)); echo "  ok   $T $name"
  else
    FAIL=$((FAIL + 1)); echo "  FAIL $T $name: ${out:0:300} $(tail -3 "$WORK/err")"
  fi
  LAST="$out"
}

start_http() {  # MODE PATH
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  PORT="$port" node "$EVERYTHING" "$1" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  TARGET=("http://127.0.0.1:$port$2")
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpclass-everything.XXXXXX")"
for T in "${TRANSPORTS[@]}"; do
  case "$T" in
    stdio) TARGET=(--cmd "node $EVERYTHING stdio");;
    http) start_http streamableHttp /mcp;;
    sse) start_http sse /sse;;
    *) echo "unknown transport $T" >&2; exit 2;;
  esac
  check list-tools '"name":"echo"' --list-tools
  [[ "$LAST" == *'"name":"get-sum"'* ]] || { FAIL=$((FAIL + 1)); echo "  FAIL $T get-sum not listed"; }
  check echo '"text":"Echo: hello from mcpclass"' echo 'message=hello from mcpclass'
  check get-sum 'is 5' get-sum a=2 b=3
  check list-resources '"uri":' --list-resources
  URI="$(printf '%s' "$LAST" | python3 -c 'import json,sys; print(json.load(sys.stdin)["resources"][0]["uri"])' 2>/dev/null)"
  check read-resource "\"uri\":\"$URI\"" --read "$URI"
  check get-prompt '"messages":[' --prompt simple-prompt
  stop_server
done
rm -rf "$WORK"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
