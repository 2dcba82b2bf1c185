#!/usr/bin/env bash
# run.sh BUILD_DIR CONSUMER_SRC: installs the build into a temporary prefix and builds and runs
# downstream consumers against it: CMake find_package (C++ library, C ABI shared and static, and
# the capi-only component) and pkg-config (mcpclass.pc shared, mcpclass-static.pc static).
set -euo pipefail
BUILD="$1"
SRC="$2"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpclass-consumer.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log"
test -f "$PREFIX/include/mcpclass/mcpclass.h"
PCDIR="$(dirname "$(find "$PREFIX" -name mcpclass.pc | head -n1)")"
CFGDIR="$(dirname "$(find "$PREFIX" -name mcpclassConfig.cmake | head -n1)")"
test -f "$CFGDIR/mcpclassConfigVersion.cmake"
echo "installed: $(find "$PREFIX" -type f | wc -l) files; pkg-config in ${PCDIR#"$PREFIX"/}"

# CMake, everything.
cmake -S "$SRC" -B "$WORK/all" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >"$WORK/all.log"
cmake --build "$WORK/all" >>"$WORK/all.log" || { cat "$WORK/all.log"; exit 1; }
"$WORK/all/consumer_cxx"
"$WORK/all/consumer_c"
"$WORK/all/consumer_c_static"
if ldd "$WORK/all/consumer_c_static" | grep -q libmcpclass; then
  echo "consumer_c_static depends on libmcpclass.so" >&2
  exit 1
fi

# CMake, the C ABI component alone.
cmake -S "$SRC" -B "$WORK/capi" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" -DCAPI_ONLY=ON \
  >"$WORK/capi.log" || { cat "$WORK/capi.log"; exit 1; }
cmake --build "$WORK/capi" >>"$WORK/capi.log"
"$WORK/capi/consumer_c"

# A version the package does not satisfy is refused.
mkdir -p "$WORK/badver"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(v LANGUAGES C)\nfind_package(mcpclass 9.0 REQUIRED)\n' \
  >"$WORK/badver/CMakeLists.txt"
if cmake -S "$WORK/badver" -B "$WORK/badver/b" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null 2>&1; then
  echo "find_package(mcpclass 9.0) succeeded" >&2
  exit 1
fi

# pkg-config, shared and static.
export PKG_CONFIG_PATH="$PCDIR"
test "$(pkg-config --modversion mcpclass)" = "$(sed -n 's/^#define MCPC_VERSION_STRING "\(.*\)"/\1/p' "$PREFIX/include/mcpclass/mcpclass.h")"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags mcpclass) "$SRC/consumer.c" \
  -o "$WORK/pc_shared" $(pkg-config --libs mcpclass) \
  -Wl,-rpath,"$(pkg-config --variable=libdir mcpclass)"
"$WORK/pc_shared"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags mcpclass-static) \
  "$SRC/consumer.c" -o "$WORK/pc_static" $(pkg-config --static --libs mcpclass-static)
"$WORK/pc_static"
echo "install consumers: 7 passed, 0 failed"
