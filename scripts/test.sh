#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds warning-free, runs every test with ctest,
# then the doctest suite again under ASan+UBSan (scripts/test-sanitizers.sh, ./build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DMCPCLASS_WERROR=ON
cd "${MCPCLASS_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 -j "$(nproc)"
echo "=== mcpclass_tests under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh) ==="
cd "$OLDPWD" && ./scripts/test-sanitizers.sh
