#!/usr/bin/env bash
# Set up (once) and run the whole test suite. Extra arguments go to pytest.
source "$(dirname "$0")/scripts/setup_venv.sh" requirements-dev.txt
exec python -m pytest -q "$@"
