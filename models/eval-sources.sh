#!/usr/bin/env bash
# Accuracy of a classifier per source and per shape on held-out rows: MMLU-Pro's hashed 20% and
# the test split of each source in router_queries.jsonl.gz (unpacked once into the cache), and the
# same rows framed as chat ("<source> framed").
# usage: models/eval-sources.sh [path/to/mcpclass] [config]   (default: the learned default)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-${MCPCLASS_BIN:-$here/../build/mcpclass}}"
config="${2:-$here/mmlu14.yaml}"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
mkdir -p "$cache/data"
queries="$cache/data/router_queries.jsonl"
if [ ! -f "$queries" ] || [ "$here/data/router_queries.jsonl.gz" -nt "$queries" ]; then
  gzip -dc "$here/data/router_queries.jsonl.gz" > "$queries.tmp"
  mv "$queries.tmp" "$queries"
fi
# The same held-out rows in chat framing the training templates do not use (models/shapes.py).
framed="$cache/data/heldout-framed.jsonl"
stale=$([ -f "$framed" ] || echo missing)
for input in shapes.py training-mix.py data/mmlu_pro_questions.jsonl data/router_queries.jsonl.gz; do
  [ "$here/$input" -nt "$framed" ] && stale=yes
done
[ -z "$stale" ] || /usr/bin/python3 "$here/training-mix.py" --heldout-variants "$framed"
[ "$config" != "$here/mmlu14.yaml" ] || "$here/setup.sh" "$bin"
exec "$bin" eval "$here/data/mmlu_pro_questions.jsonl" "$queries" "$framed" -c "$config" --split test \
  --groups router8 --latency-samples 0
