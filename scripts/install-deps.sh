#!/usr/bin/env bash
# Installs the Debian packages mcpclass needs to build and test. Idempotent: installs only what is
# missing, so a second run costs one dpkg query.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-format
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libfmt-dev doctest-dev libvalijson-dev libcli11-dev libyaml-cpp-dev libssl-dev
  libre2-dev         # linear-time regex engine for the rule classifier (std::regex backtracks)
  nodejs npm curl    # third-party MCP peers (conformance suite, Inspector CLI) for tests
  libtorch-dev libsentencepiece-dev libhnswlib-dev   # learned classifiers (MCPCLASS_WITH_TORCH)
  libopenblas0-pthread  # libtorch on the reference BLAS is ~10x slower
  golang-go python3-pytest   # the Go (cgo) and Python (ctypes) bindings and their tests
  clang libclang-rt-14-dev   # libFuzzer targets and sanitizer runtimes (tests/fuzz, scripts/test-sanitizers.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
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
