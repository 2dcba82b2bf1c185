#!/usr/bin/env bash
# One command for the in-process benchmarks and the footprint figures (issue 8). Builds a Release,
# keyword-only (no libtorch) library into ./build-bench once, then writes bench/results/report.md
# and bench/results/report.json. Every time is also given as a ratio against a baseline measured
# in the same run (this machine is shared and noisy: compare ratios, not nanoseconds).
# bench/http.sh (wrk vs nginx) is separate.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MCPCLASS_BENCH_BUILD_DIR:-$ROOT/build-bench}"
OUT="$ROOT/bench/results"
ITERATIONS="${MCPCLASS_BENCH_ITERATIONS:-20000}"
mkdir -p "$OUT"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMCPCLASS_WITH_TORCH=OFF \
    -DMCPCLASS_BUILD_TESTS=OFF -DMCPCLASS_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" --parallel "${MCPCLASS_JOBS:-2}" --target mcpclass_bench
CLI="$BUILD/mcpclass"
if ! cmake --build "$BUILD" --parallel "${MCPCLASS_JOBS:-2}" --target mcpclass-cli >"$BUILD/cli-build.log" 2>&1; then
  echo "bench: WARNING: the CLI does not build (log $BUILD/cli-build.log); no stdio footprint figures"
  CLI=""
fi

"$BUILD/bench/mcpclass_bench" --iterations "$ITERATIONS" >"$OUT/inprocess.json"
python3 "$ROOT/bench/report.py" --inprocess "$OUT/inprocess.json" --cli "$CLI" \
  --bench-binary "$BUILD/bench/mcpclass_bench" --library "$BUILD/src/libmcpclass_core.a" \
  --json "$OUT/report.json" --markdown "$OUT/report.md"
rm -f "$OUT/inprocess.json"
echo "bench: wrote $OUT/report.md and $OUT/report.json"
