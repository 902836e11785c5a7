"""Telling the store a run's process is alive (a run silent for long is marked interrupted)."""
from __future__ import annotations

import logging
import threading
import time

from core.runs.store import RunStore

__all__ = ["HEARTBEAT_EVERY_S", "Heartbeat"]

_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr

HEARTBEAT_EVERY_S = 2.0


class Heartbeat:
    """Marks the run alive every HEARTBEAT_EVERY_S from a daemon thread while the `with` block runs (also
    through graph compilation and msrun's start-up, when no step reports)."""

    def __init__(self, store: RunStore, run_id: str, every_s: float = HEARTBEAT_EVERY_S):
        self.store, self.run_id, self.every_s = store, run_id, every_s
        self.done = threading.Event()

    def __enter__(self) -> "Heartbeat":
        threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{self.run_id}").start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()

    def _beat(self) -> None:
        while not self.done.wait(self.every_s):
            try:
                self.store.update(self.run_id, heartbeat=time.time())
            except Exception as e:  # a locked or vanished store must not kill training; the next beat retries
                _LOG.warning("heartbeat for %s failed: %s", self.run_id, e)
