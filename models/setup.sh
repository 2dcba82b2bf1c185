#!/usr/bin/env bash
# Prepares the learned default: converts USE-lite (models/fetch-use-lite.sh) and trains the
# 14-category MMLU-Pro head, both cached under ${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/mcpclass}
# and keyed by checksums, so a rerun is instant.
# usage: models/setup.sh [path/to/mcpclass]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${1:-${MCPCLASS_BIN:-$root/build/mcpclass}}"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
data="${MCPCLASS_MMLU_DATA:-$here/data/mmlu_pro_questions.jsonl}"

"$here/fetch-use-lite.sh" "$bin"

[ -f "$data" ] || { echo "setup: training data $data not found" >&2; exit 1; }
# Head options live here; any change (or a new encoder or data file) retrains.
train_args=(--split train --test-percent 20 --epochs 50 --hidden 512 --lr 0.003 --weight-decay 0.0001 --seed 7
            --ensemble 3 --label-smoothing 0.1 --augment-crops --lexical-mix 0.35 --lexical-epochs 20
            --lexical-lr 0.01)
# The key covers the converted model, the data, these options, the head format and mmlu14.yaml
# (its categories and encoder choice).
key="$(cat "$cache/use-lite/source" <(sha256sum "$data" "$here/mmlu14.yaml" | cut -d' ' -f1) \
  <(echo "${train_args[*]} head-format-3") | sha256sum | cut -d' ' -f1)"
head="$cache/heads/mmlu14.safetensors"
exec 9>"$cache/.mmlu14.lock"
flock 9
if [ -f "$head" ] && [ -f "$head.json" ] && [ "$(cat "$head.key" 2>/dev/null)" = "$key" ]; then
  echo "setup: $head is up to date" >&2
  exit 0
fi
mkdir -p "$cache/heads"
echo "setup: training the 14-category head on $data (held-out 20% excluded)" >&2
"$bin" train -c "$here/mmlu14.yaml" --data "$data" --out "$head" "${train_args[@]}"
echo "$key" > "$head.key"
