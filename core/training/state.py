"""What the loop carries from step to step: the run's state, an epoch's tally, one step's outcome."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.config import TrainConfig
from core.messages import Message
from core.training.build import Model, TrainData
from core.training.clock import StepClock
from core.training.events import CallbackList
from core.training.parallel import Parallel
from core.training.step_planner import StepPlanner

__all__ = ["LoopState", "EpochTally", "StepOutcome"]


@dataclass
class EpochTally:
    """What an epoch's steps add up to on this process, and whether the run ended inside the epoch."""
    started: float
    paused: float = 0.0   # seconds the run was paused during the epoch (not training time)
    loss_sum: float = 0.0
    correct: int = 0
    seen: int = 0
    grads: dict[str, np.ndarray] | None = None  # of the epoch's last step
    ended: str | None = None                     # stopped | diverged
    said: Message | None = None
    diverged_at_step: int | None = None


@dataclass
class LoopState:
    """What every step of a run needs."""
    config: TrainConfig
    data: TrainData
    model: Model
    events: CallbackList
    clock: StepClock
    planner: StepPlanner
    parallel: Parallel | None
    step: int            # steps taken so far
    first_step: int      # the number of this session's first step (it compiles)
    compiled: set[str]   # the step graphs called so far (their first call compiles); the planner reads it too


@dataclass(frozen=True)
class StepOutcome:
    step: int
    loss: float
    correct: int          # this worker's correct predictions
    samples: int          # the step's samples over all workers
    seconds: float
    grads: dict | None = None
