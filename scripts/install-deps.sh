#!/usr/bin/env bash
# Installs the Debian packages mcpclass needs to build and test. Idempotent: installs only what is
# missing, so a second run costs one dpkg query.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-format
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libfmt-dev doctest-dev libvalijson-dev libcli11-dev libyaml-cpp-dev libssl-dev
  libre2-dev         # linear-time regex engine for the rule classifier (std::regex backtracks)
  curl openssl       # third-party HTTPS client and the throw-away test CA (tests/unit/tls_files.hpp)
  libtorch-dev libsentencepiece-dev libhnswlib-dev   # learned classifiers (MCPCLASS_WITH_TORCH)
  libopenblas0-pthread  # libtorch on the reference BLAS is ~10x slower
  libdnnl-dev        # oneDNN: the native USE-lite encoder (bf16 matmuls) without libtorch
  golang-go python3-pytest   # the Go (cgo) and Python (ctypes) bindings and their tests
  clang libclang-rt-14-dev   # libFuzzer targets and sanitizer runtimes (tests/fuzz, scripts/test-sanitizers.sh)
  wrk                        # HTTP load generator: the load.soak test and bench/run.sh
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Third-party MCP peers for tests (conformance suite, Inspector CLI) need node and npm. Some
# machines carry a nodejs build that bundles npm and conflicts with Debian's npm package, so ask
# for the commands, not the packages.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
