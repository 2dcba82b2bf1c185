#!/usr/bin/env bash
# Configures (once) the clang ASan+UBSan build that the fuzz targets and the sanitizer run of the
# doctest suite share: tests/fuzz/configure.sh BUILD_DIR [SANITIZERS]. One library build serves
# both (tests/fuzz/CMakeLists.txt), where two separate ones cost CI a second cold build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$1"
SANITIZERS="${2:-address,undefined}"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT/tests/fuzz" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
    -DMCPCLASS_FUZZ_SANITIZERS="$SANITIZERS" >/dev/null
fi
