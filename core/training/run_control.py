"""Between steps the trainer asks its Control: pause? stop? wait a moment (slow motion)? new optimizer settings?
And the data-parallel version, decided together."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from core.live_settings import MAX_STEP_DELAY_S

if TYPE_CHECKING:  # the run store reads this module's limits without importing MindSpore
    from core.training.parallel import Parallel

__all__ = ["Control", "NoControl", "CollectiveControl", "wait_while_paused", "slow_down", "MAX_STEP_DELAY_S"]

PAUSE_POLL_S = 0.1


class Control:
    """What the trainer asks between steps; a run store or a test implements it. By default nothing is asked:
    never paused or stopped, no delay, no new optimizer setting."""

    def paused(self) -> bool:
        return False

    def stop_requested(self) -> bool:
        return False

    def step_delay(self) -> float:
        """Seconds to wait before the next step (slow motion for a lesson); 0: none."""
        return 0.0

    def setting_requests(self) -> dict[str, float]:
        """Optimizer settings asked for while the run trains (core/live_settings.py: name -> value), each
        handed over once (then no longer in the dict)."""
        return {}

    def interrupts_wait(self) -> bool:
        """Whether slow motion's wait should end now (a pause or a stop asked for)."""
        return self.stop_requested() or self.paused()

    def fine_grained(self) -> bool:
        """Whether the run must go one step at a time now (a Step ×n under way, slow motion), not K per call."""
        return False


class NoControl(Control):
    """Nobody asks anything."""


class CollectiveControl(Control):
    """Pause and stop decided together: every `every` steps (and at every poll while paused) the workers
    add up their requests, so all of them pause, resume or stop at the same step. A worker that acted
    alone would leave the others waiting in their next gradient all-reduce."""

    def __init__(self, parallel: "Parallel", local: Control, every: int = 10):
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

    def interrupts_wait(self) -> bool:
        return self.stop  # paused() here is a collective call: every rank must make the same number of them

    def step_delay(self) -> float:
        return self.local.step_delay()  # a delay needs no agreement: the slowest rank sets the pace anyway

    # setting_requests stays empty: a rank that changed its optimizer alone would train a different model from
    # the others, so live optimizer changes are refused for data-parallel runs (LiveSetting.parallel_ok, checked
    # by RunStore.ask); the config's setting_changes are replayed by every rank at the same step.


def slow_down(control: Control) -> float:
    """Wait the control's step delay (slow motion), answering a stop or pause at once; the seconds waited."""
    delay = min(max(control.step_delay(), 0.0), MAX_STEP_DELAY_S)
    if delay <= 0:
        return 0.0
    started = time.monotonic()
    while time.monotonic() - started < delay and not control.interrupts_wait():
        time.sleep(min(PAUSE_POLL_S, delay))
    return time.monotonic() - started


def wait_while_paused(control: Control) -> tuple[bool, float]:
    """Block while the run is paused; (whether it is asked to stop, seconds spent paused)."""
    paused_at = None
    while control.paused() and not control.stop_requested():
        paused_at = paused_at or time.monotonic()
        time.sleep(PAUSE_POLL_S)
    return control.stop_requested(), (time.monotonic() - paused_at if paused_at else 0.0)
