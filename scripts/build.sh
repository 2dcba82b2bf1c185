#!/usr/bin/env bash
# Configures (once) and builds mcpclass into ./build. Extra arguments go to CMake at configure time.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${MCPCLASS_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
