#!/usr/bin/env bash
# What an unseen shape costs: for each router-query source, trains the default's head without
# that source (models/training-mix.py --exclude) and evaluates it on the source's test split,
# next to the default (which saw the source's train rows). ~2-3 min of training per source.
# usage: models/leave-one-source-out.sh [path/to/mcpclass] [source...]   (default: all four)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-${MCPCLASS_BIN:-$here/../build/mcpclass}}"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
"$here/setup.sh" "$bin"
. "$here/head-options.sh"
work="$cache/loso"
mkdir -p "$work"
queries="$cache/data/router_queries.jsonl"
gzip -dc "$here/data/router_queries.jsonl.gz" > "$queries"
router8() { grep -o '"router8_accuracy":[^,]*' | head -1 | cut -d: -f2; }
printf '%-14s %10s %10s\n' source with without
sources=("${@:2}")
[ ${#sources[@]} -gt 0 ] || sources=(stackexchange medquad clinc150 banking77)
for source in "${sources[@]}"; do
  grep "\"source\": \"$source\"" "$queries" > "$work/$source.test.jsonl"
  /usr/bin/python3 "$here/training-mix.py" "$work/mix-$source.jsonl" "${mix_args[@]}" --exclude "$source"
  sed "s|head: cache:heads/mmlu14.safetensors|head: $work/without-$source.safetensors|" \
    "$here/mmlu14.yaml" > "$work/without-$source.yaml"
  "$bin" train -c "$work/without-$source.yaml" --data "$work/mix-$source.jsonl" \
    --out "$work/without-$source.safetensors" "${train_args[@]}" > "$work/train-$source.log" 2>&1
  with="$("$bin" eval "$work/$source.test.jsonl" -c "$here/mmlu14.yaml" --split test \
    --groups router8 --latency-samples 0 2>/dev/null | tail -1 | router8)"
  without="$("$bin" eval "$work/$source.test.jsonl" -c "$work/without-$source.yaml" --split test \
    --groups router8 --latency-samples 0 2>/dev/null | tail -1 | router8)"
  printf '%-14s %10.4f %10.4f\n' "$source" "$with" "$without"
done
