#!/usr/bin/env bash
# The heavy evaluation of the learned default (not a timed test): held-out MMLU-Pro accuracy
# (14-way and the 8 router groups), calibration, latency and memory; and the 5-category kNN on
# training_data.csv. usage: bench/learned/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-${MCPCLASS_BUILD_DIR:-build}}"
data=models/data/mmlu_pro_questions.jsonl
models/setup.sh "$build/mcpclass"
echo "== 14-way head, held-out 20% of MMLU-Pro (never trained on) =="
"$build/mcpclass" eval "$data" -c models/mmlu14.yaml --split test --groups router8 --latency-samples 500
echo "== the same head on short router queries: training_data.csv mapped to the router groups =="
# technology -> computer science, general -> other; science stays a group name, so only the
# router8 figure means something here.
routerq="$(mktemp --suffix=.csv)"
trap 'rm -f "$routerq"' EXIT
awk -F, 'BEGIN{OFS=","} NR>1{if($1=="technology")$1="computer science"; if($1=="general")$1="other"} {print}' \
  tests/data/training_data.csv > "$routerq"
"$build/mcpclass" eval "$routerq" -c models/mmlu14.yaml --split all --groups router8 --latency-samples 0 |
  grep -E '^(rows|router8)'
echo "== 5-category kNN (training_data.csv), self-check =="
"$build/mcpclass" index -c models/router5-knn.yaml
echo "== latency / throughput / RSS =="
"$build/bench/learned/bench_learned" models/mmlu14.yaml "$data" 1
