#!/usr/bin/env bash
# Set up (once) and run the whole test suite. Extra arguments go to pytest.
#   ./test.sh --fast    the unit lane (tests/unit: minutes), for daily work
#   ./test.sh tests/process/test_queue.py -k sweep    any pytest selection
source "$(dirname "$0")/scripts/setup_venv.sh" requirements-dev.txt
if [ "${1:-}" = "--fast" ]; then
  shift
  exec python -m pytest -q -m unit tests/unit "$@"
fi
# The sign-in test's OpenID Connect provider (npm's oidc-provider), installed once from its lock file.
if command -v npm >/dev/null && [ ! -d tests/support/oidc/node_modules ]; then
  npm ci --prefix tests/support/oidc --no-audit --no-fund --silent
fi
exec python -m pytest -q "$@"
