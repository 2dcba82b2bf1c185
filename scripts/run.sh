#!/usr/bin/env bash
# Installs dependencies, builds, and starts the server with the embedded default classifier.
# Arguments are passed to `mcpclass serve` (default: --stdio).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
if [ $# -eq 0 ]; then set -- --stdio; fi
exec ./build/mcpclass serve "$@"
