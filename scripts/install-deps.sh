#!/usr/bin/env bash
# Installs the Debian packages mcpclass needs to build and test (scripts/debian-packages.txt).
# Idempotent: installs only what is missing, so a second run costs one dpkg query.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mapfile -t PACKAGES < <("$here/debian-packages.sh")

missing=()
installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)"
for p in "${PACKAGES[@]}"; do
  grep -qx "$p install ok installed" <<<"$installed" || missing+=("$p")
done
# Third-party MCP peers for tests (conformance suite, Inspector CLI) need node and npm. Some
# machines carry a nodejs build that bundles npm and conflicts with Debian's npm package, so ask
# for the commands, not the packages. Debian 12's node (18) is too old for some peers:
# scripts/node-for-tests.sh brings a newer one from the npm registry for the tests.
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
