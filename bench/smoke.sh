#!/usr/bin/env bash
# The benchmarks' smoke run: ctest bench.smoke (issue 16: benchmarks are not timed tests; CI runs
# only this). Every harness of bench/run.sh that needs no package beyond the test suite's runs
# for about a second per target into a scratch directory: the in-process cases, HTTP against
# nginx, bare Beast and the TypeScript SDK peer, stdio against the echo floor, `mcpclass route`
# against nginx proxy_pass, and the perf profile where perf may record. Each harness checks every
# answer it gets and fails on a wrong one; the figures themselves are not judged.
# usage: bench/smoke.sh BUILD_DIR   (BUILD_DIR has mcpclass and bench/{mcpclass_bench,bare_beast,stdio_echo})
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: bench/smoke.sh BUILD_DIR}" && pwd)"
out="$(mktemp -d "${TMPDIR:-/tmp}/mcpclass-bench-smoke.XXXXXX")"
trap 'rm -rf "$out"' EXIT

# The TypeScript SDK peer's pinned packages, once per lock file. Without the optional ones (the
# ONNX peer's onnxruntime-node, ~290 MB, which only bench/run.sh's onnx section uses); a full
# install by bench/run.sh (.bench-lock) serves too.
peers="$root/bench/peers"
if ! cmp -s "$peers/package-lock.json" "$peers/node_modules/.bench-lock" 2>/dev/null &&
  ! cmp -s "$peers/package-lock.json" "$peers/node_modules/.bench-lock-smoke" 2>/dev/null; then
  (cd "$peers" && npm ci --omit=optional --no-audit --no-fund --loglevel=error)
  cp "$peers/package-lock.json" "$peers/node_modules/.bench-lock-smoke"
fi

echo "== bench/suite.py: inprocess, http, stdio (1 s per run, 1 round)"
/usr/bin/python3 "$root/bench/suite.py" --cli "$build/mcpclass" \
  --bench-binary "$build/bench/mcpclass_bench" --bare-beast "$build/bench/bare_beast" \
  --stdio-echo "$build/bench/stdio_echo" --library "$build/src/libmcpclass_core.a" \
  --out "$out" --only inprocess,http,stdio --seconds 1 --rounds 1 --conns 1,8 \
  --stdio-seconds 0.5 --iterations 500 --fail-on-errors
test -s "$out/report.md"

echo "== bench/route_proxy.py --smoke"
/usr/bin/python3 "$root/bench/route_proxy.py" --cli "$build/mcpclass" --smoke --json "$out/route.json"
test -s "$out/route.json"

# The precision accuracy harness on the trainer's tiny model and 40 rows: needs kind transformer
# (a build with the learned component) and Debian's python3-torch to train it (seconds, cached);
# its ONNX Runtime rows say "skipped" without onnxruntime-node, as in this install.
if grep -q '^MCPCLASS_WITH_LEARNED:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null &&
  /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "== bench/accuracy/precision_accuracy.py --smoke"
  /usr/bin/python3 "$root/bench/accuracy/precision_accuracy.py" --cli "$build/mcpclass" --smoke \
    --json "$out/precision-accuracy.json" --md "$out/precision-accuracy.md"
  test -s "$out/precision-accuracy.md"
  echo "== bench/adapters_memory.py --smoke"
  /usr/bin/python3 "$root/bench/adapters_memory.py" --cli "$build/mcpclass" --smoke \
    --precisions f32 --json "$out/adapters-memory.json" --md "$out/adapters-memory.md"
  grep -q '"within_limit": true' "$out/adapters-memory.json"
else
  echo "== bench/accuracy/precision_accuracy.py and adapters_memory.py skipped: no learned component in $build or no python3-torch"
fi

# perf needs perf_event_open, which containers often forbid: probe first.
if command -v perf >/dev/null && perf record -q -o "$out/probe.data" -- true >/dev/null 2>&1; then
  echo "== bench/profile_http.py (1 s per target, 1 round)"
  /usr/bin/python3 "$root/bench/profile_http.py" --cli "$build/mcpclass" \
    --bare-beast "$build/bench/bare_beast" --json "$out/profile.json" --seconds 1 --rounds 1
  test -s "$out/profile.json"
else
  echo "== bench/profile_http.py skipped: perf cannot record here"
fi
echo "bench smoke: every harness ran and every answer checked out"
