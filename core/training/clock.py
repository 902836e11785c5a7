"""Training time, throughput and ETA of a run (no MindSpore here)."""
from __future__ import annotations

import time

__all__ = ["StepClock"]


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

    def eta(self, step: int, fallback_step_seconds: float = 0.0) -> float:
        """Seconds left at the mean timed step time (fallback_step_seconds before any step was timed)."""
        mean = self.train_seconds / self.timed_steps if self.timed_steps else fallback_step_seconds
        return mean * (self.total_steps - step)
