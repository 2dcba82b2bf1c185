#!/usr/bin/env bash
# The long fuzzing run: at least 10M executions per target (tests/fuzz/run.sh --runs). Hours for
# the engine target (fuzz_session runs handlers on threads, ~10^3 exec/s); pass --targets to pick.
# Inputs that take 10 s only because the machine is busy are not hangs: allow a minute.
MCPCLASS_FUZZ_TIMEOUT="${MCPCLASS_FUZZ_TIMEOUT:-60}" exec "$(dirname "$0")/run.sh" --runs "${MCPCLASS_FUZZ_RUNS:-10000000}" "$@"
