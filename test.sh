#!/usr/bin/env bash
# Set up (once) and run the whole test suite. Extra arguments go to pytest (one run, as given).
#   ./test.sh --fast    the unit lane (tests/unit: minutes), for daily work
#   ./test.sh tests/process/test_queue.py -k sweep    any pytest selection
#   ./test.sh -n 2 --dist loadfile tests/process     a group on two workers (pytest-xdist)
source "$(dirname "$0")/scripts/setup_venv.sh" requirements-dev.txt
if [ "${1:-}" = "--fast" ]; then
  shift
  exec python -m pytest -q -n 2 --dist loadfile -m unit tests/unit "$@"
fi
# The sign-in test's OpenID Connect provider (npm's oidc-provider), installed once from its lock file.
if command -v npm >/dev/null && [ ! -d tests/support/oidc/node_modules ]; then
  npm ci --prefix tests/support/oidc --no-audit --no-fund --silent
fi
if [ "$#" -gt 0 ]; then
  exec python -m pytest -q "$@"
fi
# The whole suite in two phases (docs/testing.md), each on two workers (pytest-xdist, a module per worker at a
# time, so a module's fixtures are made once; the longest files first): one worker's training fills the other's
# waits. First the process group, then the browser and reliability groups, whose servers and browsers then share
# the machine with one other such test at a time, never with the process group's training. The unit group runs
# beside both phases in one more process at the lowest priority: the phases leave ~10 % of the cores idle while
# their tests wait for servers, browsers and runs, and the unit tests (~100 CPU-seconds, all CPU) take only that,
# instead of adding their time to phase 1. Its tests that wait against a clock (marked `deadline`) run in phase 1.
# One cache of the C++ operators, one of the drawn-looking digits and one of warm workers' graphs for both phases:
# each phase's pytest would otherwise make its own (tests/conftest.py; its workers share their controller's), and
# build the operators again with g++, ~10 CPU-seconds. The caches are written atomically.
shared_caches=()
for cache in STUDIO_KERNEL_CACHE STUDIO_DATA_CACHE STUDIO_GRAPH_CACHE_DIR; do
  if [ -z "${!cache:-}" ]; then
    printf -v "$cache" '%s' "$(mktemp -d -t studio-cache-XXXXXX)"
    export "${cache?}"
    shared_caches+=("${!cache}")
  fi
done
# Lowest priority: nice 19, in a session of its own whose autogroup is niced too (where Linux shares the cores
# between sessions first, as on these machines, a process's own nice counts only inside its session).
unit_log="$(mktemp -t studio-unit-XXXXXX)"
setsid nice -n 19 bash -c '[ ! -w /proc/self/autogroup ] || echo 19 > /proc/self/autogroup
  exec python -m pytest -q -m "unit and not deadline" tests/unit' >"$unit_log" 2>&1 &
unit_pid=$!
# On the way out (an interrupt, too) the unit group ends with the rest; one that has ended leaves no group behind.
trap 'if kill -0 -- "-$unit_pid" 2>/dev/null; then kill -- "-$unit_pid"; fi; rm -rf "${shared_caches[@]}" "$unit_log"' EXIT
status=0
python -m pytest -q -n 2 --dist loadfile -m "process or deadline" tests/unit tests/process || status=$?
python -m pytest -q -n 2 --dist loadfile tests/browser tests/reliability || status=$?
echo "The unit group (beside both phases, at the lowest priority):"
unit_status=0
wait "$unit_pid" || unit_status=$?
cat "$unit_log"
[ "$unit_status" -eq 0 ] || status=$unit_status
exit "$status"
