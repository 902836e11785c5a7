"""Run ids: what RunStore.create_run makes, and the check that a given id is one (never a path)."""
from __future__ import annotations

import re
import time
import uuid

__all__ = ["RUN_ID_RE", "new_run_id", "check_run_id"]

RUN_ID_RE = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")  # nothing else is a run id


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def check_run_id(run_id: str) -> str:
    """The run id itself, or ValueError: a run id never names a path ('../', '/', '.')."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise ValueError(f"{run_id!r} is not a run id (expected e.g. 20261129-153000-a1b2c3).")
    return run_id
