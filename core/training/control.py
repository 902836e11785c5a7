"""Pause and stop between steps: what the trainer asks, and the data-parallel version decided together."""
from __future__ import annotations

import time
from typing import Protocol

from core.training.parallel import Parallel

__all__ = ["Control", "NoControl", "CollectiveControl", "wait_while_paused"]

PAUSE_POLL_S = 0.1


class Control(Protocol):
    """What the trainer asks between steps; a run store or a test implements it."""

    def paused(self) -> bool: ...

    def stop_requested(self) -> bool: ...


class NoControl:
    def paused(self) -> bool:
        return False

    def stop_requested(self) -> bool:
        return False


class CollectiveControl:
    """Pause and stop decided together: every `every` steps (and at every poll while paused) the workers
    add up their requests, so all of them pause, resume or stop at the same step. A worker that acted
    alone would leave the others waiting in their next gradient all-reduce."""

    def __init__(self, parallel: Parallel, local: Control, every: int = 10):
        self.parallel, self.local, self.every = parallel, local, every
        self.calls, self.pause, self.stop = 0, False, False

    def paused(self) -> bool:
        self.calls += 1
        if self.pause or (self.calls - 1) % self.every == 0:
            stop, pause = self.parallel.sum([float(self.local.stop_requested()), float(self.local.paused())])
            self.stop, self.pause = stop > 0, pause > 0 and not stop > 0
        return self.pause

    def stop_requested(self) -> bool:
        return self.stop


def wait_while_paused(control: Control) -> tuple[bool, float]:
    """Block while the run is paused; (whether it is asked to stop, seconds spent paused)."""
    paused_at = None
    while control.paused() and not control.stop_requested():
        paused_at = paused_at or time.monotonic()
        time.sleep(PAUSE_POLL_S)
    return control.stop_requested(), (time.monotonic() - paused_at if paused_at else 0.0)
