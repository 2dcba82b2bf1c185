#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into ./build-fuzz once — later runs rebuild only
# what changed — and fuzzes each target, seeded from tests/transcripts/*.jsonl and the committed
# regression inputs (tests/fuzz/regressions/<target>/, replayed first: each once was a crash).
#   tests/fuzz/run.sh --seconds 60            60 s per target, random seeds, the growing corpus
#   tests/fuzz/run.sh --smoke --seconds 60    CI-sized (the ctest `fuzz.smoke`): a fixed seed per
#                                             target and a fresh corpus from the seeds each run
#   tests/fuzz/run.sh --runs 10000000         long: 10M executions per target (tests/fuzz/run-long.sh)
#   tests/fuzz/run.sh --replay                only replay the regression inputs (ctest `fuzz.regressions`)
#   tests/fuzz/run.sh --targets "fuzz_sse fuzz_config" --seconds 60
# A crash leaves its input in build-fuzz/artifacts/ and fails the script; copy it into
# tests/fuzz/regressions/<target>/ once fixed. The growing corpus stays in build-fuzz/corpus/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# MCPCLASS_FUZZ_SANITIZERS=undefined: the UBSan-only throughput build (README.md), in its own
# directory so that it never replaces the ASan one.
SANITIZERS="${MCPCLASS_FUZZ_SANITIZERS:-address,undefined}"
case "$SANITIZERS" in
  address,undefined) default_build="$ROOT/build-fuzz" ;;
  undefined) default_build="$ROOT/build-fuzz-ubsan" ;;
  *) echo "run.sh: MCPCLASS_FUZZ_SANITIZERS is address,undefined or undefined" >&2; exit 2 ;;
esac
BUILD="${MCPCLASS_FUZZ_BUILD_DIR:-$default_build}"
JOBS="${MCPCLASS_JOBS:-2}"
SECONDS_PER_TARGET=15
RUNS=""
REPLAY=0
SMOKE=0
TARGETS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --replay) REPLAY=1; shift ;;
    --smoke) SMOKE=1; shift ;;
    --targets) TARGETS="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

"$ROOT/tests/fuzz/configure.sh" "$BUILD" "$SANITIZERS"
# Progress lines and clang's note about the library's GCC-only -Wshadow=local are noise here.
cmake --build "$BUILD" --parallel "$JOBS" --target mcpclass_fuzzers |
  grep -vE "^\[|Wshadow=local|^1 warning generated" || true
[ -x "$BUILD/bin/fuzz_jsonrpc" ] || { echo "run.sh: build failed" >&2; exit 1; }
[ -n "$TARGETS" ] || TARGETS="$(cd "$BUILD/bin" && ls fuzz_* | tr '\n' ' ')"

# Seeds, regenerated every run (cheap): one file per client line for the message parsers, one
# file per transcript (its client lines, in order) for the engine.
SEEDS="$BUILD/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS"/{fuzz_jsonrpc,fuzz_session,fuzz_config,fuzz_http_request,fuzz_sse,fuzz_oauth,fuzz_http_client,fuzz_checkpoint,fuzz_pii}
for t in "$ROOT"/tests/transcripts/*.jsonl; do
  name="$(basename "$t" .jsonl)"
  sed -n 's/^>>\{0,1\} //p' "$t" >"$SEEDS/fuzz_session/$name"
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "$line" >"$SEEDS/fuzz_jsonrpc/$name-$n"
    printf 'POST /mcp HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s' \
      "${#line}" "$line" >"$SEEDS/fuzz_http_request/$name-$n"
    printf '\0\1\2\3event: message\nid: %d\ndata: %s\n\n' "$n" "$line" >"$SEEDS/fuzz_sse/$name-$n"
  done < <(sed -n 's/^>>\{0,1\} //p' "$t")
done
printf 'POST /mcp/tools/call HTTP/1.1\r\nHost: localhost\r\nContent-Length: 52\r\n\r\n{"name":"classify_text","arguments":{"text":"hi!"}}\n' \
  >"$SEEDS/fuzz_http_request/router"
printf '\5\7\1\3: comment\r\nretry: 1500\r\nid: 7\r\nevent: ping\r\ndata: a\r\ndata: b\r\n\r\n' \
  >"$SEEDS/fuzz_sse/crlf"
printf '\0Bearer error="insufficient_scope", scope="classify admin", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"' \
  >"$SEEDS/fuzz_oauth/challenge"
printf '\1https://mcp.example:8443/tenant/mcp?x=1#f' >"$SEEDS/fuzz_oauth/resource"
printf '\2https://auth.example/realms/a?code=c&state=s' >"$SEEDS/fuzz_oauth/issuer"
printf '\3{"access_token":"t","token_type":"Bearer","expires_in":1e300,"refresh_token":"r"}' \
  >"$SEEDS/fuzz_oauth/token"
printf '\4{"issuer":"https://auth.example/tenant","token_endpoint":"https://auth.example/t","registration_endpoint":"http://127.0.0.1:9/r"}' \
  >"$SEEDS/fuzz_oauth/metadata"
printf '\5eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZSIsImV4cCI6OTk5OTk5OTk5OX0.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlcw' \
  >"$SEEDS/fuzz_oauth/jwt"
printf '\6{"keys":[{"kty":"EC","kid":"k","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"}]}' \
  >"$SEEDS/fuzz_oauth/jwks"
# fuzz_http_client: two control bytes (read size, limits), then what the peer answers.
cp "$ROOT"/tests/fuzz/seeds/http_client/* "$SEEDS/fuzz_http_client/"
# fuzz_checkpoint: a selector byte (0 safetensors, 1 config.json, 2 adapter), then the file(s).
cp "$ROOT"/tests/fuzz/seeds/checkpoint/* "$SEEDS/fuzz_checkpoint/"
# fuzz_pii: the texts of the labelled PII set, one file each.
/usr/bin/python3 - "$ROOT/tests/data/pii/labelled.jsonl" "$SEEDS/fuzz_pii" <<'PY'
import json, sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    with open("%s/labelled-%d" % (sys.argv[2], n), "w", encoding="utf-8") as f:
        f.write(json.loads(line)["text"])
PY
for f in "$ROOT"/tests/fuzz/seeds/config/* "$ROOT"/examples/*.yaml "$ROOT"/examples/*.json; do
  [ -f "$f" ] && cp "$f" "$SEEDS/fuzz_config/"
done

# One target: replays its regression inputs (--replay) or fuzzes it; prints what it found and
# returns non-zero on a crash, a leak or a hang.
fuzz_target() {
  local target="$1"
  local bin="$BUILD/bin/$target"
  local regressions="$ROOT/tests/fuzz/regressions/$target"
  mkdir -p "$BUILD/corpus/$target" "$BUILD/artifacts"
  # A hang, not a slow input: the long run shares the machine, so it passes a larger bound.
  local timeout="${MCPCLASS_FUZZ_TIMEOUT:-10}"
  [ "$target" = fuzz_session ] && [ "$timeout" -lt 30 ] && timeout=30
  local dict=()
  case "$target" in fuzz_jsonrpc | fuzz_session | fuzz_http_request) dict=(-dict="$ROOT/tests/fuzz/json.dict") ;; esac
  # fuzz_config's time grows with the document (yaml-cpp, compiling its rules): 4 KiB inputs run
  # ~11x faster than 16 KiB ones and reached more coverage in the same time (README.md). Seeds
  # longer than that (default.yaml) are read truncated.
  local max_len=65536
  [ "$target" = fuzz_config ] && max_len=4096
  if [ "$REPLAY" = 1 ]; then
    [ -d "$regressions" ] || return 0
    echo "== $target: replaying $(ls "$regressions" | wc -l) regression inputs"
    "$bin" -timeout="$timeout" "$regressions"/* >"$BUILD/$target.log" 2>&1 ||
      { tail -40 "$BUILD/$target.log"; return 1; }
    return 0
  fi
  local limit=(-max_total_time="$SECONDS_PER_TARGET")
  [ -n "$RUNS" ] && limit=(-runs="$RUNS")
  local corpus="$BUILD/corpus/$target"
  local seed=()
  if [ "$SMOKE" = 1 ]; then
    # The test command's run must not fail at random on a change that did not cause it: the same
    # seed and the same starting corpus every time, so a machine tries the same inputs in the same
    # order (as many as its time allows). New inputs are the long runs' job (run-long.sh).
    seed=(-seed=$(($(printf '%s' "$target" | cksum | cut -d' ' -f1) % 4000000000 + 1)))
    corpus="$BUILD/smoke-corpus/$target"
    rm -rf "$corpus"
    mkdir -p "$corpus"
  fi
  echo "== $target: ${RUNS:+$RUNS runs}${RUNS:-$SECONDS_PER_TARGET s}${seed:+, ${seed[0]}}"
  local dirs=("$corpus" "$SEEDS/$target")
  [ -d "$regressions" ] && dirs+=("$regressions")
  if "$bin" "${limit[@]}" "${seed[@]}" -timeout="$timeout" -rss_limit_mb=2560 -max_len="$max_len" \
    -print_final_stats=1 "${dict[@]}" -artifact_prefix="$BUILD/artifacts/$target-" \
    "${dirs[@]}" >"$BUILD/$target.log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
      "$BUILD/$target.log" | tr '\n' ' '
    grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+' "$BUILD/$target.log" | tail -1
  else
    echo "!! $target FAILED — input in $BUILD/artifacts/, log $BUILD/$target.log:"
    grep -A30 -E 'ERROR|runtime error|fuzz_[a-z_]+: ' "$BUILD/$target.log" | head -50
    return 1
  fi
}

# Targets run MCPCLASS_FUZZ_PARALLEL at a time (default: one per core), each fuzzer being a single
# process: the smoke run's 9 targets take half the wall time on 2 cores. Each prints when done.
PARALLEL="${MCPCLASS_FUZZ_PARALLEL:-$(nproc)}"
status=0
running=0
for target in $TARGETS; do
  if [ "$running" -ge "$PARALLEL" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  (
    rc=0
    fuzz_target "$target" >"$BUILD/$target.summary" 2>&1 || rc=$?
    cat "$BUILD/$target.summary"
    exit $rc
  ) &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
