"""The tests' PostgreSQL (core/runs/store/local_postgres.py): where the server is not installed, the tests that
need it skip with the reason; with STUDIO_REQUIRE_REAL_FAULTS (set by .ci/run, which installs the package) they
fail instead."""
from __future__ import annotations

import os

import pytest

from core.runs.store.local_postgres import PostgresMissing, PostgresServer

__all__ = ["PostgresServer", "skip_or_fail", "started_postgres"]


def skip_or_fail(reason: str):
    if os.environ.get("STUDIO_REQUIRE_REAL_FAULTS"):
        pytest.fail(reason + " (STUDIO_REQUIRE_REAL_FAULTS is set: this test must run here)")
    pytest.skip(reason)


def started_postgres(*args, **kwargs) -> PostgresServer:
    try:
        return PostgresServer(*args, **kwargs).start()
    except PostgresMissing as e:
        skip_or_fail(str(e))
