"""Where an interrupted run picks up (no MindSpore here: the weights are NumPy arrays)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.training.events import EpochMetrics

__all__ = ["ResumeState"]


@dataclass(frozen=True)
class ResumeState:
    """The weights of a run's last checkpoint and what came before them."""
    epoch: int                         # epochs finished (the checkpoint's)
    step: int                          # steps taken in them
    weights: dict[str, np.ndarray]
    history: tuple[EpochMetrics, ...] = ()  # their epoch metrics, oldest first
    best_weights: dict[str, np.ndarray] | None = None  # early stopping: the best epoch's weights
    elapsed: float = 0.0               # training seconds already spent
