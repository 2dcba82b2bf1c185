#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios (initialize, tools_call,
# elicitation-sep1034-client-defaults, sse-retry) against tests/conformance/conformance_client.cpp.
# Usage: client-conformance.sh PATH/TO/conformance_client [run-client-conformance.sh options]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLIENT="$1"; shift
"$HERE/npm-ci.sh"
MCP_CONFORMANCE_DIR="$HERE/../conformance" exec "$HERE/../conformance/run-client-conformance.sh" "$CLIENT" "$@"
