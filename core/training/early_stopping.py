"""The best epoch so far, and early stopping on it (done outside the graph, so it works in Graph mode)."""
from __future__ import annotations

import math

import numpy as np

from core.config import TrainConfig
from core.messages import Message
from core.training.resume import ResumeState
from core.training.weights import restore, snapshot

__all__ = ["EarlyStopping"]


class EarlyStopping:
    """Tracks the lowest validation loss (always: every epoch says whether it was the best so far) and, when
    enabled, keeps the best epoch's weights and asks to stop after `patience` epochs without improvement."""

    def __init__(self, enabled: bool, patience: int):
        self.enabled, self.patience = enabled, patience
        self.best_val: float = math.inf
        self.best_epoch: int | None = None
        self.bad_epochs = 0
        self.best_weights: dict[str, np.ndarray] | None = None

    @classmethod
    def for_run(cls, config: TrainConfig, resume: ResumeState | None) -> "EarlyStopping":
        """A fresh tracker, or one that picks up a resumed run's best epoch and weights."""
        stopping = cls(config.early_stopping, config.patience)
        if resume is None:
            return stopping
        scored = [(m.val_loss, m.epoch) for m in resume.history if m.val_loss is not None]
        if scored:  # the lowest loss; of equal ones, the first epoch
            stopping.best_val, stopping.best_epoch = min(scored)
            stopping.bad_epochs = resume.epoch - stopping.best_epoch
        stopping.best_weights = resume.best_weights
        return stopping

    def update(self, epoch: int, val_loss: float | None, net) -> bool:
        """Record an epoch's validation loss; True when it is the best so far."""
        improved = val_loss is not None and val_loss < self.best_val
        if improved and val_loss is not None:
            self.best_val, self.best_epoch, self.bad_epochs = val_loss, epoch, 0
            if self.enabled:
                self.best_weights = snapshot(net)
        else:
            self.bad_epochs += 1
        return improved

    @property
    def should_stop(self) -> bool:
        return self.enabled and self.bad_epochs >= self.patience

    def message(self) -> Message:
        return Message("early_stopped", {"patience": self.patience, "epoch": self.best_epoch})

    def restore_best(self, net) -> None:
        """Put the best epoch's weights back into net (when early stopping kept them)."""
        if self.enabled and self.best_weights is not None:
            restore(net, self.best_weights)
