#!/usr/bin/env bash
# Prepares the learned default: converts USE-lite (models/fetch-use-lite.sh) and trains the
# 14-category head (MMLU-Pro plus router-query sources), both cached under
# ${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/mcpclass} and keyed by checksums, so a rerun
# is instant.
# usage: models/setup.sh [path/to/mcpclass]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${1:-${MCPCLASS_BIN:-$root/build/mcpclass}}"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
"$here/fetch-use-lite.sh" "$bin"
# One preparation at a time: a second one (two scripts/run.sh, two pods on one volume) waits,
# then finds the first one's head up to date.
exec 9>"$cache/.mmlu14.lock"
flock 9

# A key file names inputs whose outputs are complete: written after them, renamed into place.
write_key() {
  echo "$1" > "$2.tmp.$$"
  sync "$2.tmp.$$"
  mv "$2.tmp.$$" "$2"
}

# Options of the mix and the head (models/head-options.sh); any change retrains.
. "$here/head-options.sh"
# The training rows: MMLU-Pro plus capped train rows of the router-query sources
# (models/training-mix.py); MCPCLASS_TRAIN_DATA trains on another file instead.
mix_inputs=("$here/data/mmlu_pro_questions.jsonl" "$here/data/router_queries.jsonl.gz" "$here/training-mix.py"
            "$here/shapes.py" "$here/head-options.sh")
scope_data=()  # MCPCLASS_TRAIN_DATA: its own rows are the prototypes
if [ -n "${MCPCLASS_TRAIN_DATA:-}" ]; then
  data="$MCPCLASS_TRAIN_DATA"
  mix_inputs=("$data")
else
  mkdir -p "$cache/data"
  data="$cache/data/training-mix.jsonl"
  # Every train row of the same sources: the out-of-scope score's prototypes.
  scope_data=(--scope-data "$cache/data/scope-rows.jsonl")
  mix_key="$(sha256sum "${mix_inputs[@]}" | cut -d' ' -f1 | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$data" ] || [ ! -f "$cache/data/scope-rows.jsonl" ] ||
     [ "$(cat "$data.key" 2>/dev/null)" != "$mix_key" ]; then
    rm -f "$data.key"  # no key names a half-rewritten mix
    /usr/bin/python3 "$here/training-mix.py" "$data" "${mix_args[@]}" --scope-rows "$cache/data/scope-rows.jsonl"
    write_key "$mix_key" "$data.key"
  fi
fi

[ -f "$data" ] || { echo "setup: training data $data not found" >&2; exit 1; }
# The key covers the converted model, the data, these options, the head format and mmlu14.yaml
# (its categories and encoder choice).
key="$(cat "$cache/use-lite/source" <(sha256sum "${mix_inputs[@]}" "$here/mmlu14.yaml" | cut -d' ' -f1) \
  <(echo "${train_args[*]} head-format-6") | sha256sum | cut -d' ' -f1)"
head="$cache/heads/mmlu14.safetensors"
if [ -f "$head" ] && [ -f "$head.json" ] && [ "$(cat "$head.key" 2>/dev/null)" = "$key" ]; then
  echo "setup: $head is up to date" >&2
  exit 0
fi
mkdir -p "$cache/heads"
echo "setup: training the 14-category head on $data (held-out rows excluded)" >&2
# The head and its manifest are each written to a temporary file and renamed (the manifest
# records the head's checksum, checked on load); the key goes only after both.
rm -f "$head.key"
"$bin" train -c "$here/mmlu14.yaml" --data "$data" --out "$head" "${train_args[@]}" "${scope_data[@]}"
write_key "$key" "$head.key"
