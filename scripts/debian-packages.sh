#!/usr/bin/env bash
# Prints the package names of scripts/debian-packages.txt, one a line (comments and blanks dropped).
set -euo pipefail
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "$(dirname "$0")/debian-packages.txt" | grep -v '^$'
