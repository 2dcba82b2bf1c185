#!/usr/bin/env bash
# Installs dependencies, builds, and starts the server with the embedded default classifier.
# Arguments are passed to `mcpclass serve` (default: HTTP on 127.0.0.1:8090 — /mcp, /sse,
# the router dialects, /health; add --stdio for stdio).
# The default is the learned classifier (USE-lite + the 14-category MMLU-Pro head, prepared and
# cached by models/setup.sh) when the learned component is built; otherwise, or when the model
# cannot be prepared, the keyword rules, with a log line saying why. An explicit -c/--config wins.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
build="${MCPCLASS_BUILD_DIR:-build}"
default=()
case " $* " in
  *" -c "* | *" --config "* | *" --config="*) ;;
  *)
    if grep -q '^MCPCLASS_WITH_LEARNED:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
      if models/setup.sh "$build/mcpclass" >&2; then
        default=(--config models/mmlu14.yaml)
        echo "run: serving the learned default (USE-lite + 14-category MMLU-Pro head)" >&2
      else
        echo "run: the learned model could not be prepared (see above); serving the keyword rules" >&2
      fi
    else
      echo "run: built without the learned component (MCPCLASS_WITH_LEARNED=OFF); serving the keyword rules" >&2
    fi
    ;;
esac
exec "./$build/mcpclass" serve "${default[@]}" "$@"
