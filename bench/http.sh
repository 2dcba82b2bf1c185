#!/usr/bin/env bash
# wrk measurement of classify_text over keep-alive HTTP, next to nginx serving a fixed JSON body of
# the same size, on the same machine in the same run. Not a test: numbers go to
# bench/results/http.md (and stdout).
#
# Usage: bench/http.sh [MCPCLASS_BINARY (default build/mcpclass)] [SECONDS per run (default 10)]
# Targets, each at 1 and 50 keep-alive connections:
#   mcpclass JSON-RPC  POST /mcp (tools/call classify_text, Mcp-Session-Id of one session)
#   mcpclass router    POST /mcp/tools/call {name, arguments}
#   nginx              1 worker, `return 200` of the router response body (same bytes)
# Installs wrk and nginx-light with apt-get when missing. Binds 127.0.0.1 only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build/mcpclass}"
SECS="${2:-10}"
OUT="$ROOT/bench/results/http.md"
mkdir -p "$(dirname "$OUT")"
[ -x "$BIN" ] || { echo "not executable: $BIN (build first)" >&2; exit 2; }

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}" >&2
  apt-get install -y --no-install-recommends "${need[@]}" >/dev/null || {
    apt-get update >/dev/null && apt-get install -y --no-install-recommends "${need[@]}" >/dev/null; }
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpbench.XXXXXX")"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- mcpclass ---
"$BIN" serve --http 127.0.0.1:0 2>"$TMP/serve.err" &
PIDS+=($!)
PORT=""
for _ in $(seq 1 300); do
  PORT="$(sed -n 's|.* on http://127\.0\.0\.1:\([0-9]*\)/mcp.*|\1|p' "$TMP/serve.err" | head -n1)"
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { cat "$TMP/serve.err" >&2; exit 1; }
BASE="http://127.0.0.1:$PORT"
TEXT="What is the integral of x^2 from 0 to 3?"
VERSION=2025-06-18

SESSION="$(curl -sS -D - -o /dev/null "$BASE/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$VERSION\",\"capabilities\":{},\"clientInfo\":{\"name\":\"wrk\",\"version\":\"1\"}}}" |
  tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')"
[ -n "$SESSION" ] || { echo "no session id" >&2; exit 1; }
curl -sS -o /dev/null "$BASE/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $SESSION" \
  -H "MCP-Protocol-Version: $VERSION" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'

RPC_BODY="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"classify_text\",\"arguments\":{\"text\":\"$TEXT\"}}}"
REST_BODY="{\"name\":\"classify_text\",\"arguments\":{\"text\":\"$TEXT\"}}"
RPC_RESPONSE="$(curl -sS "$BASE/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $SESSION" \
  -H "MCP-Protocol-Version: $VERSION" -d "$RPC_BODY")"
REST_RESPONSE="$(curl -sS "$BASE/mcp/tools/call" -H 'Content-Type: application/json' -d "$REST_BODY")"
echo "$RPC_RESPONSE" | grep -q '\\"class\\":0' || { echo "bad JSON-RPC answer: $RPC_RESPONSE" >&2; exit 1; }
echo "$REST_RESPONSE" | grep -q '\\"class\\":0' || { echo "bad router answer: $REST_RESPONSE" >&2; exit 1; }

cat >"$TMP/rpc.lua" <<LUA
wrk.method = "POST"
wrk.body = [==[$RPC_BODY]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "$SESSION"
wrk.headers["MCP-Protocol-Version"] = "$VERSION"
LUA
cat >"$TMP/rest.lua" <<LUA
wrk.method = "POST"
wrk.body = [==[$REST_BODY]==]
wrk.headers["Content-Type"] = "application/json"
LUA

# --- nginx: one worker, the router response body as a fixed JSON answer ---
NPORT="$(free_port)"
mkdir -p "$TMP/nginx/logs"
ESCAPED="$(printf '%s' "$REST_RESPONSE" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")"
cat >"$TMP/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 65;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  server {
    listen 127.0.0.1:$NPORT;
    location / {
      default_type application/json;
      return 200 '$ESCAPED';
    }
  }
}
CONF
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" 2>"$TMP/nginx.err" &
PIDS+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$NPORT/" && break; sleep 0.1; done
NGINX_RESPONSE="$(curl -sS -X POST "http://127.0.0.1:$NPORT/mcp/tools/call" -d "$REST_BODY")"
[ "$NGINX_RESPONSE" = "$REST_RESPONSE" ] || {
  echo "nginx body differs:"; echo "$NGINX_RESPONSE"; echo "$REST_RESPONSE"; cat "$TMP/nginx.err"; exit 1; } >&2

# --- runs ---
to_ms() {  # wrk latency like 1.23ms / 456.00us / 1.20s -> ms
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
declare -A RPS P50 P99
run() {  # run KEY CONNECTIONS URL [SCRIPT]
  local key="$1" c="$2" url="$3" script="${4:-}" threads=1
  [ "$c" -gt 1 ] && threads=2
  local args=(-t"$threads" -c"$c" -d"${SECS}s" --latency)
  [ -n "$script" ] && args+=(-s "$script")
  wrk "${args[@]}" "$url" >"$TMP/$key.$c.txt"
  if grep -q "Non-2xx\|Socket errors" "$TMP/$key.$c.txt"; then
    echo "warning: $key c=$c had errors:" >&2; grep "Non-2xx\|Socket errors" "$TMP/$key.$c.txt" >&2
  fi
  RPS[$key.$c]="$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$TMP/$key.$c.txt")"
  P50[$key.$c]="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$TMP/$key.$c.txt")")"
  P99[$key.$c]="$(to_ms "$(awk '$1 == "99%" { print $2 }' "$TMP/$key.$c.txt")")"
  echo "$key c=$c: ${RPS[$key.$c]} req/s, p50 ${P50[$key.$c]} ms, p99 ${P99[$key.$c]} ms" >&2
}
for c in 1 50; do
  run nginx "$c" "http://127.0.0.1:$NPORT/mcp/tools/call" "$TMP/rest.lua"
  run rpc "$c" "$BASE/mcp" "$TMP/rpc.lua"
  run rest "$c" "$BASE/mcp/tools/call" "$TMP/rest.lua"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
{
  echo "# classify_text over keep-alive HTTP vs nginx"
  echo
  echo "Generated by \`bench/http.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2), $("$NGINX" -v 2>&1 | sed 's/.*: //'), ${SECS} s per run, all on 127.0.0.1 in the same run."
  echo "mcpclass: \`serve --http\` with the default (rules) classifier, 2 I/O threads; nginx: 1 worker"
  echo "answering every request with \`return 200\` of the router response body ($(printf '%s' "$REST_RESPONSE" | wc -c) bytes)."
  echo "Request text: \"$TEXT\". wrk: 1 thread for 1 connection, 2 threads for 50."
  echo
  echo "| target | conns | req/s | p50 ms | p99 ms | req/s vs nginx |"
  echo "|---|---:|---:|---:|---:|---:|"
  for c in 1 50; do
    for key in nginx rpc rest; do
      case "$key" in
        nginx) name="nginx fixed JSON body";;
        rpc) name="mcpclass POST /mcp (JSON-RPC, session)";;
        rest) name="mcpclass POST /mcp/tools/call";;
      esac
      echo "| $name | $c | ${RPS[$key.$c]} | ${P50[$key.$c]} | ${P99[$key.$c]} | $(ratio "${RPS[$key.$c]}" "${RPS[nginx.$c]}") |"
    done
  done
  echo
  echo "The client (wrk) and both servers share the same CPUs, so absolute numbers depend on the"
  echo "machine's load; the ratio is the number to compare."
} >"$OUT"
cat "$OUT"
