#!/usr/bin/env bash
# Every benchmark of issue 8 in one command; writes bench/results/report.md and report.json.
#   in-process  rule classify, entropy decision, JSON-RPC tools/call (mcpclass_bench)
#   learned     embedding classify per call (stdio round trips) when a libtorch build is there
#   http        wrk at 1, 50, 500 keep-alive connections: mcpclass (JSON, SSE, /mcp/tools/call)
#               vs nginx (1 worker, fixed body) vs a bare Boost.Beast server (bench/bare_beast.cpp,
#               same fixed body) vs the official TypeScript SDK (bench/peers)
#   stdio       round trips through a pipe, mcpclass vs the TypeScript SDK vs an echo floor
#               (bench/stdio_echo.c)
#   footprint   RSS idle/under load, spawn-to-first-answer, binary sizes, with/without libtorch
#   scaling     throughput vs I/O threads, number of categories, text length
#   route       mcpclass route's added latency and throughput vs nginx proxy_pass (route.json)
#   onnx        the learned default vs the same model exported to ONNX and served by the TS SDK +
#               onnxruntime-node (bench/onnx_peer.py): agreement, HTTP at c1/c32, encoder forward
#               alone (onnx.json); needs the libtorch build, python3-torch and python3-onnx
#   transformer kind transformer (BERT-base, ModernBERT-base sizes) vs ONNX Runtime on the same
#               model (bench/transformer_peer.py): latency at 32/128 tokens, HTTP c8, FLOP rate,
#               RSS; opt-in (MCPCLASS_BENCH_ONLY=transformer)
#   adapters    RSS of one BERT-base sized base with four LoRA adapters (adapters:) against the
#               base alone, one adapter merged and four merged copies (bench/adapters_memory.py,
#               adapters-memory.json and .md); opt-in (MCPCLASS_BENCH_ONLY=adapters)
#   accuracy    kind transformer's precisions (f32, int8, bf16) and ONNX Runtime fp32/int8 on the
#               held-out rows of a small BERT trained on the router queries
#               (bench/accuracy/precision_accuracy.py, precision-accuracy.json and .md); needs the
#               learned build and python3-torch (training once, cached), python3-onnx for the int8 peer
#   profile     where a request's CPU goes over HTTP: mcpclass against bare Beast, per shared object
#               and symbol, with perf (bench/profile_http.py, profile.json)
#   tokenizers  tokenizer.json encoding per text, mcpclass vs the reference Hugging Face tokenizers
#               on one thread (bench/tokenizers.mjs, tokenizers.json and tokenizers.md)
# Builds a Release keyword-only mcpclass into ./build-bench (once, then incrementally); the
# libtorch figures use ./build (scripts/build.sh) when it was configured with libtorch.
# Knobs (environment): MCPCLASS_BENCH_SECONDS per wrk run (2), MCPCLASS_BENCH_ROUNDS of the HTTP
# runs (5; medians count), MCPCLASS_BENCH_CONNS (1,50,500),
# MCPCLASS_BENCH_STDIO_SECONDS (3), MCPCLASS_BENCH_ITERATIONS (20000), MCPCLASS_BENCH_SPAWN_RUNS
# (15), MCPCLASS_BENCH_ONLY (inprocess,learned,http,stdio,footprint,scaling,route,onnx,accuracy,
# profile,tokenizers),
# MCPCLASS_BENCH_ONNX_THREADS (1: intra-op threads of both encoders in the onnx section),
# MCPCLASS_BENCH_TRANSFORMER_THREADS (2: both sides of the opt-in transformer section),
# MCPCLASS_BENCH_TORCH_BUILD_DIR (./build; empty = skip), MCPCLASS_BENCH_OUT (bench/results).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${MCPCLASS_BENCH_BUILD_DIR:-$ROOT/build-bench}"
TORCH_BUILD="${MCPCLASS_BENCH_TORCH_BUILD_DIR-$ROOT/build}"
OUT="${MCPCLASS_BENCH_OUT:-$ROOT/bench/results}"
JOBS="${MCPCLASS_JOBS:-2}"

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v perf >/dev/null || need+=(linux-perf)  # the profile section
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]}" >&2
  apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; }
fi
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "bench: node and npm are needed for the TypeScript SDK peer (scripts/install-deps.sh)" >&2; exit 2; }

# The TypeScript SDK peer: pinned packages, installed once per lock file.
PEERS="$ROOT/bench/peers"
if ! cmp -s "$PEERS/package-lock.json" "$PEERS/node_modules/.bench-lock" 2>/dev/null; then
  (cd "$PEERS" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$PEERS/package-lock.json" "$PEERS/node_modules/.bench-lock"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMCPCLASS_WITH_LEARNED=OFF \
    -DMCPCLASS_BUILD_TESTS=OFF -DMCPCLASS_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" --parallel "$JOBS" --target mcpclass_bench bare_beast stdio_echo \
  mcpclass-cli >&2

torch_args=()
if [ -n "$TORCH_BUILD" ] && grep -q '^MCPCLASS_WITH_LEARNED:BOOL=ON' "$TORCH_BUILD/CMakeCache.txt" 2>/dev/null; then
  cmake --build "$TORCH_BUILD" --parallel "$JOBS" --target mcpclass-cli >&2
  torch_args=(--torch-cli "$TORCH_BUILD/mcpclass")
else
  echo "bench: no libtorch build at '$TORCH_BUILD': footprint without libtorch only" >&2
fi

export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# Debian's python3-torch and python3-onnx, for the onnx and accuracy sections' exports.
python_torch_onnx() {
  /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null && return
  echo "bench: installing python3-torch python3-onnx" >&2
  apt-get install -y -q --no-install-recommends python3-torch python3-onnx >/dev/null ||
    { apt-get update -q >/dev/null &&
      apt-get install -y -q --no-install-recommends python3-torch python3-onnx >/dev/null; }
}
ONLY="${MCPCLASS_BENCH_ONLY:-inprocess,learned,http,stdio,footprint,scaling,route,onnx,accuracy,profile,tokenizers}"
# route: what `mcpclass route` adds over calling the upstream, against nginx proxy_pass
# (bench/route_proxy.py); the learned row needs the libtorch build's CLI and models/setup.sh.
if [[ ",$ONLY," == *,route,* ]]; then
  route_cli="$BUILD/mcpclass"
  [ ${#torch_args[@]} -gt 0 ] && route_cli="$TORCH_BUILD/mcpclass"
  /usr/bin/python3 "$ROOT/bench/route_proxy.py" --cli "$route_cli" --json "$OUT/route.json" \
    --seconds "${MCPCLASS_BENCH_SECONDS:-3}" --rounds "${MCPCLASS_BENCH_ROUNDS:-3}" >&2
fi
# onnx: the learned default against the same model in ONNX Runtime behind the TypeScript SDK
# (bench/onnx_peer.py; issue 16). The export needs Debian's python3-torch and python3-onnx.
if [[ ",$ONLY," == *,onnx,* ]]; then
  if [ ${#torch_args[@]} -eq 0 ]; then
    echo "bench: onnx skipped: no libtorch build at '$TORCH_BUILD'" >&2
  else
    python_torch_onnx
    cmake --build "$TORCH_BUILD" --parallel "$JOBS" --target bench_encoder_forward >&2
    "$ROOT/models/setup.sh" "$TORCH_BUILD/mcpclass" >&2
    /usr/bin/python3 "$ROOT/bench/onnx_peer.py" --cli "$TORCH_BUILD/mcpclass" \
      --forward-binary "$TORCH_BUILD/bench/learned/bench_encoder_forward" --json "$OUT/onnx.json" \
      --threads "${MCPCLASS_BENCH_ONNX_THREADS:-1}" --seconds "${MCPCLASS_BENCH_SECONDS:-3}" \
      --rounds "${MCPCLASS_BENCH_ROUNDS:-3}" >&2
  fi
fi
# transformer: kind transformer at BERT-base and ModernBERT-base sizes against ONNX Runtime on the
# same model (bench/transformer_peer.py; issue 31), not in the default set (minutes per model):
# MCPCLASS_BENCH_ONLY=transformer. Needs Debian's python3-torch; writes transformer-onnx.json and
# the tables as transformer-onnx-tables.md (transformer-onnx.md quotes them with the notes).
if [[ ",$ONLY," == *,transformer,* ]]; then
  if [ ${#torch_args[@]} -eq 0 ]; then
    echo "bench: transformer skipped: no build with the learned component at '$TORCH_BUILD'" >&2
  else
    cmake --build "$TORCH_BUILD" --parallel "$JOBS" --target bench_transformer bench_units >&2
    [ -f "$ROOT/tests/tokenizers/node_modules/tokenizers/package.json" ] ||
      (cd "$ROOT/tests/tokenizers" && npm ci --no-audit --no-fund --loglevel=error >&2)
    /usr/bin/python3 "$ROOT/bench/transformer_peer.py" --cli "$TORCH_BUILD/mcpclass" \
      --bench-binary "$TORCH_BUILD/bench/learned/bench_transformer" \
      --units-binary "$TORCH_BUILD/bench/learned/bench_units" \
      --json "$OUT/transformer-onnx.json" --md "$OUT/transformer-onnx-tables.md" \
      --threads "${MCPCLASS_BENCH_TRANSFORMER_THREADS:-2}" --rounds "${MCPCLASS_BENCH_ROUNDS:-3}" >&2
  fi
fi
# adapters: one base shared by four LoRA adapters at BERT-base size (bench/adapters_memory.py;
# issue 48), not in the default set; needs Debian's python3-torch to write the checkpoint.
if [[ ",$ONLY," == *,adapters,* ]]; then
  if [ ${#torch_args[@]} -eq 0 ]; then
    echo "bench: adapters skipped: no build with the learned component at '$TORCH_BUILD'" >&2
  else
    /usr/bin/python3 "$ROOT/bench/adapters_memory.py" --cli "$TORCH_BUILD/mcpclass" \
      --json "$OUT/adapters-memory.json" --md "$OUT/adapters-memory.md" >&2
  fi
fi
# accuracy: bf16 and int8 against f32 on a real trained model, beside ONNX Runtime's int8 peer
# (bench/accuracy/precision_accuracy.py; issue 46). Trains the model once (cached, minutes) with
# Debian's python3-torch; the int8 peer is rewritten with python3-onnx.
if [[ ",$ONLY," == *,accuracy,* ]]; then
  if [ ${#torch_args[@]} -eq 0 ]; then
    echo "bench: accuracy skipped: no build with the learned component at '$TORCH_BUILD'" >&2
  else
    python_torch_onnx
    /usr/bin/python3 "$ROOT/bench/accuracy/precision_accuracy.py" --cli "$TORCH_BUILD/mcpclass" \
      --json "$OUT/precision-accuracy.json" --md "$OUT/precision-accuracy.md" >&2
  fi
fi
# profile: where a request's CPU goes over HTTP, mcpclass against bare Beast, by shared object
# and symbol (bench/profile_http.py, perf record; issue 16).
if [[ ",$ONLY," == *,profile,* ]]; then
  /usr/bin/python3 "$ROOT/bench/profile_http.py" --cli "$BUILD/mcpclass" \
    --bare-beast "$BUILD/bench/bare_beast" --json "$OUT/profile.json" \
    --seconds "${MCPCLASS_BENCH_SECONDS:-5}" >&2
fi
# tokenizers: the reference's batch encode with RAYON_NUM_THREADS=1 against mcpclass (issue 30).
if [[ ",$ONLY," == *,tokenizers,* ]]; then
  cmake --build "$BUILD" --parallel "$JOBS" --target bench_tokenizer >&2
  [ -f "$ROOT/tests/tokenizers/node_modules/tokenizers/package.json" ] ||
    (cd "$ROOT/tests/tokenizers" && npm ci --no-audit --no-fund --loglevel=error >&2)
  PATH="$("$ROOT/scripts/node-for-tests.sh"):$PATH" RAYON_NUM_THREADS=1 MCPCLASS_BENCH_OUT="$OUT" \
    node "$ROOT/bench/tokenizers.mjs" "$BUILD" >&2
fi
SUITE_ONLY="$(echo ",$ONLY," | sed 's/,route,/,/g; s/,onnx,/,/g; s/,transformer,/,/g; s/,accuracy,/,/g; s/,profile,/,/g; s/,tokenizers,/,/g; s/^,//; s/,$//')"
if [ -z "$SUITE_ONLY" ]; then
  # Only the separate sections ran: carry their JSON into the existing report.
  [ -f "$OUT/report.json" ] && /usr/bin/python3 "$ROOT/bench/report.py" "$OUT"
  exit 0
fi
exec /usr/bin/python3 "$ROOT/bench/suite.py" --cli "$BUILD/mcpclass" \
  --bench-binary "$BUILD/bench/mcpclass_bench" --bare-beast "$BUILD/bench/bare_beast" \
  --stdio-echo "$BUILD/bench/stdio_echo" --library "$BUILD/src/libmcpclass_core.a" \
  "${torch_args[@]}" --out "$OUT" \
  --seconds "${MCPCLASS_BENCH_SECONDS:-2}" --conns "${MCPCLASS_BENCH_CONNS:-1,50,500}" \
  --rounds "${MCPCLASS_BENCH_ROUNDS:-5}" \
  --stdio-seconds "${MCPCLASS_BENCH_STDIO_SECONDS:-3}" \
  --iterations "${MCPCLASS_BENCH_ITERATIONS:-20000}" \
  --spawn-runs "${MCPCLASS_BENCH_SPAWN_RUNS:-15}" \
  --only "$SUITE_ONLY"
