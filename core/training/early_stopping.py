"""The best epoch so far, and early stopping on it as a callback (done outside the graph, so it works in Graph
mode). The loop marks every epoch that has the lowest validation loss so far (BestEpoch: best.ckpt follows that
mark, whatever the callbacks' order); EarlyStopping reads the mark, as Lightning's EarlyStopping callback reads
a monitored metric, and sets should_stop."""
from __future__ import annotations

import math

import numpy as np

from core.config import TrainConfig
from core.messages import Message
from core.training.events import Callback, EpochMetrics
from core.training.resume_state import ResumeState
from core.training.weight_arrays import restore, snapshot

__all__ = ["BestEpoch", "EarlyStopping"]


class BestEpoch:
    """The lowest validation loss so far, and its epoch."""

    def __init__(self) -> None:
        self.best_val: float = math.inf
        self.best_epoch: int | None = None

    @classmethod
    def for_run(cls, resume: ResumeState | None) -> BestEpoch:
        """A fresh tracker, or one that picks up a resumed run's best epoch."""
        best = cls()
        scored = [(m.val_loss, m.epoch) for m in resume.history if m.val_loss is not None] if resume else []
        if scored:  # the lowest loss; of equal ones, the first epoch
            best.best_val, best.best_epoch = min(scored)
        return best

    def update(self, epoch: int, val_loss: float | None) -> bool:
        """Record an epoch's validation loss; True when it is the best so far (equal is no improvement)."""
        if val_loss is None or not val_loss < self.best_val:
            return False
        self.best_val, self.best_epoch = val_loss, epoch
        return True


class EarlyStopping(Callback):
    """Keeps the best epoch's weights, sets should_stop after `patience` epochs without a new best, and puts
    the best weights back when training ends (unless it diverged)."""

    def __init__(self, patience: int, bad_epochs: int = 0, best_weights: dict[str, np.ndarray] | None = None):
        self.patience, self.bad_epochs, self.best_weights = patience, bad_epochs, best_weights
        self.best_epoch: int | None = None

    @classmethod
    def for_run(cls, config: TrainConfig, resume: ResumeState | None) -> EarlyStopping | None:
        """None when the config asks for no early stopping; a resumed run's counts and best weights carry on."""
        if not config.early_stopping:
            return None
        stopping = cls(config.patience)
        if resume is not None:
            stopping.best_epoch = BestEpoch.for_run(resume).best_epoch
            stopping.bad_epochs = resume.epoch - stopping.best_epoch if stopping.best_epoch is not None else 0
            stopping.best_weights = resume.best_weights
        return stopping

    def on_epoch_end(self, net, metrics: EpochMetrics) -> None:
        if metrics.best:
            self.best_epoch, self.bad_epochs, self.best_weights = metrics.epoch, 0, snapshot(net)
        else:
            self.bad_epochs += 1
        self.should_stop = self.bad_epochs >= self.patience

    def stop_message(self) -> Message:
        return Message("early_stopped", {"patience": self.patience, "epoch": self.best_epoch})

    def on_train_end(self, net, status: str) -> None:
        if status != "diverged" and self.best_weights is not None:
            restore(net, self.best_weights)
