"""The loop's one question before each graph call: how many steps now?

The answer holds the lesson's controls and the grouping of steps: wait while the run is paused, then slow
motion's delay, take new optimizer settings, and size the next call — K steps in one graph call where nothing
needs them one at a time, else one. Single steps: a Step ×n or slow motion under way, the epoch's last step
(it returns the gradients), a call that a replayed setting change or a validation would fall inside of,
and the session's first call (its graph compiles about 3× faster than K steps', so the first live step shows
sooner; the epoch's end needs the single-step graph anyway)."""
from __future__ import annotations

from dataclasses import dataclass

from core.training.clock import StepClock
from core.training.run_control import MAX_STEP_DELAY_S, Control, slow_down, wait_while_paused
from core.training.events import CallbackList
from core.training.live_values import LiveValues

__all__ = ["Turn", "StepPlanner"]


@dataclass(frozen=True)
class Turn:
    """The answer: how many steps the next call takes (0: the epoch's steps are all taken), whether the run is
    asked to stop instead, and how long it waited paused or slowed down (not training time)."""
    steps: int
    stop: bool = False
    paused: float = 0.0


class StepPlanner:
    """Asked before every graph call of a run (see the module's docstring)."""

    def __init__(self, control: Control, values: LiveValues, events: CallbackList, clock: StepClock,
                 k: int, validate_every: int, validates: bool, compiled: set[str]):
        self.control, self.values, self.events, self.clock = control, values, events, clock
        self.k = k
        self.validate_every = validate_every if validates else 0
        self.compiled = compiled  # the step graphs called so far, shared with the calls (core.training.step_calls)
        self.current_delay = 0.0

    def next_turn(self, step: int, last_step: int) -> Turn:
        """The turn after `step` steps of an epoch that ends at `last_step`."""
        if step >= last_step:
            return Turn(0)
        stop, paused = self._wait()
        if stop:
            return Turn(0, stop=True, paused=paused)
        for change in self.values.before_step(step + 1, self.control):
            self.events.emit(change)
        return Turn(self._size(step, last_step), paused=paused)  # sized after the wait: a Step asks for singles

    def delay(self) -> float:
        """Slow motion's wait before each step, as read at the last turn (0: none). It does not ask the control:
        asking mid-call (while a K-step call's steps are reported) could act on a pause before their steps are
        counted."""
        return self.current_delay

    def validation_due(self, step: int, last_step: int) -> bool:
        """Validation inside an epoch, every validate_every steps (the epoch's last step validates anyway)."""
        return bool(self.validate_every) and step % self.validate_every == 0 and step != last_step

    def _wait(self) -> tuple[bool, float]:
        """Wait while paused, then slow motion's delay, then for a pause asked for during the delay: whether
        the run is asked to stop, and the seconds waited."""
        stop, paused = wait_while_paused(self.control)
        if not stop:
            self.current_delay = min(max(self.control.step_delay(), 0.0), MAX_STEP_DELAY_S)
            paused += slow_down(self.control)
            stop, more = wait_while_paused(self.control)
            paused += more
        if paused:
            self.clock.paused(paused)
        return stop, paused

    def _size(self, step: int, last_step: int) -> int:
        left = last_step - step
        if self.k <= 1 or left - 1 < self.k or self.control.fine_grained() or "single" not in self.compiled:
            return 1
        first, end = step + 1, step + self.k
        change = self.values.next_change(first + 1)
        if change is not None and change <= end:
            return 1
        every = self.validate_every
        if every and (first - 1) // every != (end - 1) // every:
            return 1
        return self.k
