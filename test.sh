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
# The whole suite in one session on two workers (pytest-xdist, a module per worker at a time, so a module's fixtures
# are made once), the longest files first whatever their group (docs/testing.md): one worker's training fills the
# other's waits, and no long file is left alone at the end.
exec python -m pytest -q -n 2 --dist loadfile tests/unit tests/process tests/browser tests/reliability
