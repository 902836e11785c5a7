#!/usr/bin/env bash
# Set up (once) and run the whole test suite. Extra arguments go to pytest.
source "$(dirname "$0")/scripts/setup_venv.sh" requirements-dev.txt
# The sign-in test's OpenID Connect provider (npm's oidc-provider), installed once from its lock file.
if command -v npm >/dev/null && [ ! -d tests/oidc/node_modules ]; then
  npm ci --prefix tests/oidc --no-audit --no-fund --silent
fi
exec python -m pytest -q "$@"
