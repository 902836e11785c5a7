"""Training time, throughput and ETA of a run (no MindSpore here)."""
from __future__ import annotations

import time

from core.messages import Message

__all__ = ["StepClock", "about"]


class StepClock:
    """Times the steps of a run. The first step of a session compiles (Graph mode) or warms up, so it is not
    timed; neither are pauses, validation or anything else between steps: throughput and ETA come from the
    step calls alone. Elapsed time is the run's training time: from its start (a resumed run's earlier time
    included), pauses left out."""

    def __init__(self, total_steps: int, already_elapsed: float = 0.0):
        self.total_steps = total_steps
        self.start = time.monotonic() - already_elapsed
        self.paused_seconds = 0.0
        self.train_seconds = 0.0
        self.timed_steps = self.timed_samples = 0

    def paused(self, seconds: float) -> None:
        """The run was paused this long: not training time."""
        self.paused_seconds += seconds

    def record(self, seconds: float, samples: int) -> None:
        """A timed step: how long it took and how many samples it trained on (over all workers)."""
        self.train_seconds += seconds
        self.timed_steps += 1
        self.timed_samples += samples

    def elapsed(self) -> float:
        return time.monotonic() - self.start - self.paused_seconds

    def samples_per_s(self, seconds: float, samples: int) -> float:
        """Over the timed steps so far; before there is one, this step's own rate."""
        if self.train_seconds > 0:
            return self.timed_samples / self.train_seconds
        return samples / seconds if seconds > 0 else 0.0

    def eta(self, step: int, delay_per_step: float = 0.0) -> float | None:
        """Seconds left: the steps left at the mean timed step time, plus slow motion's delay before each; None
        until a step was timed (the first step compiles: its time says nothing of the others')."""
        if not self.timed_steps:
            return None
        return (self.train_seconds / self.timed_steps + delay_per_step) * max(self.total_steps - step, 0)


def about(seconds: float | None) -> Message:
    """A time left as people say it ("about 20 s", "about 3 min"), not as a clock reading ("0:20"); before there
    is an estimate, "estimating"."""
    if seconds is None:
        return Message("eta_unknown")
    s = max(seconds, 0.0)
    if s < 10:
        return Message("about_few_s")
    if 5 * round(s / 5) < 60:
        return Message("about_s", {"n": int(5 * round(s / 5))})
    if round(s / 60) < 60:
        return Message("about_min", {"n": round(s / 60)})
    hours, minutes = divmod(round(s / 60), 60)
    return Message("about_h", {"h": hours, "m": minutes}) if minutes else Message("about_whole_h", {"h": hours})
