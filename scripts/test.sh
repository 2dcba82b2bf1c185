#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds warning-free, checks that a fresh Debian
# machine would have every file the build used (scripts/check-deb-closure.py), runs every test with
# ctest, then the doctest suite again under ASan+UBSan (scripts/test-sanitizers.sh, in the
# fuzz targets' clang build ./build-fuzz, which ctest's fuzz tests already compiled).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# The third-party MCP peers need Node 20+; Debian 12 has 18, so a pinned one may come from npm.
node_dir="$(./scripts/node-for-tests.sh)"
if [ -n "$node_dir" ]; then
  export PATH="$node_dir:$PATH"
  echo "test: node $(node --version) from $node_dir; npm $(npm --version 2>/dev/null)"
fi
./scripts/build.sh -DMCPCLASS_WERROR=ON
build="${MCPCLASS_BUILD_DIR:-build}"
/usr/bin/python3 scripts/check-deb-closure.py "$build"
cd "$build"
ctest --output-on-failure --timeout 600 -j "$(nproc)"
echo "=== mcpclass_tests under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh) ==="
cd "$OLDPWD" && ./scripts/test-sanitizers.sh
