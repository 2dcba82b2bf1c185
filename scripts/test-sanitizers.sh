#!/usr/bin/env bash
# The doctest suite (mcpclass_tests) under AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer.
# Builds it in the clang build the fuzz targets use (tests/fuzz/configure.sh, ./build-fuzz: the
# keyword-only library, no libtorch, whose prebuilt binaries are not instrumented), so the test
# command compiles the instrumented library once for both; a second run only rebuilds what changed.
# Usage: scripts/test-sanitizers.sh [--tsan] [doctest arguments...]
#   --tsan: ThreadSanitizer instead (GCC), into ./build-tsan, running the concurrent tests (HTTP server
#   and its limits, sessions, the clients and the remote classifier) unless doctest arguments
#   choose others, with cmake/tsan.supp (false positives of reference counts inside the
#   uninstrumented libstdc++ and libboost_json: exception_ptr, runtime_error's message, a parsed
#   message's monotonic_resource). `ctest --preset tsan` uses the same file.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${MCPCLASS_ASAN_BUILD_DIR:-build-fuzz}"
TSAN=0
if [ "${1:-}" = "--tsan" ]; then
  shift
  TSAN=1
  BUILD_DIR="${MCPCLASS_TSAN_BUILD_DIR:-build-tsan}"
  [ $# -gt 0 ] || set -- -tc="http*,client*,remote*,stdio client*,streamable http*,session ids*,server*,composite*"
fi
JOBS="${MCPCLASS_JOBS:-$(nproc)}"
if [ "$TSAN" = 1 ]; then
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
      -DMCPCLASS_SANITIZE=thread -DMCPCLASS_WITH_LEARNED=OFF -DMCPCLASS_WERROR=ON
  fi
  project_dir="$BUILD_DIR"
else
  tests/fuzz/configure.sh "$BUILD_DIR" address,undefined
  project_dir="$BUILD_DIR/mcpclass" # tests/fuzz adds the project as its subdirectory mcpclass
fi
# The stdio client tests spawn the CLI, so it builds here too.
cmake --build "$BUILD_DIR" --parallel "$JOBS" --target mcpclass_tests mcpclass-cli
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/cmake/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
project_dir="$(cd "$project_dir" && pwd)"
cd tests # the working directory ctest gives the suite
exec "$project_dir/tests/mcpclass_tests" "$@"
