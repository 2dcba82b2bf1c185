#!/usr/bin/env bash
# run.sh [BUILD_DIR] [CALLS]: in-process classify latency from C, Go and Python next to an MCP
# HTTP round trip, on this machine (medians). Needs a built BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="$(cd "${1:-build}" && pwd)"
CALLS="${2:-20000}"
LIBDIR="$BUILD/capi"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cc -O2 -std=c11 -I"$BUILD/capi/include" bindings/bench/bench.c -o "$WORK/bench" -L"$LIBDIR" -lmcpclass \
  -Wl,-rpath,"$LIBDIR"
"$WORK/bench" "$CALLS"
if command -v go >/dev/null; then
  (cd bindings/go && PKG_CONFIG_PATH="$LIBDIR/pkgconfig" GOFLAGS=-mod=mod GOPROXY=off \
    GOCACHE="$BUILD/go/cache" GOPATH="$BUILD/go/path" go run ./examples/bench "$CALLS")
fi
MCPCLASS_LIBRARY="$LIBDIR/libmcpclass.so" PYTHONPATH=bindings/python PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 bindings/bench/bench.py "$CALLS"
