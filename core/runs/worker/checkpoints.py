"""A run's checkpoints in the store: written after every sound epoch, and the final weights at the end."""
from __future__ import annotations

from core.config import TrainConfig
from core.messages import Explained, Message
from core.model import checkpoint
from core.runs.store import RunStore
from core.training.events import Callback, EpochMetrics
from core.training.loop import TrainResult

__all__ = ["CheckpointWriteError", "CheckpointWriter"]


class CheckpointWriteError(Explained, OSError):
    """A checkpoint could not be written (disk full, folder unwritable); the message says what is intact."""


class CheckpointWriter(Callback):
    """Saves the run's checkpoint (model.ckpt) after every epoch, and with early stopping the best epoch's
    weights too (best.ckpt: what a resumed run restores at the end)."""

    def __init__(self, store: RunStore, run_id: str, config: TrainConfig, saved_epoch: int | None = None):
        self.store, self.run_id, self.config = store, run_id, config
        self.path = store.checkpoint_path(run_id)
        self.best_path = store.best_checkpoint_path(run_id)
        self.saved_epoch = saved_epoch  # the epoch of the checkpoint on disk (None: there is none)

    def on_epoch_end(self, net, metrics: EpochMetrics) -> None:
        self.save(net, metrics.epoch, metrics.step, best=metrics.best)

    def save(self, net, epoch: int, step: int | None, best: bool = False) -> None:
        meta = {"run_id": self.run_id, "epoch": epoch, "step": step}
        try:
            checkpoint.save(net, self.config, self.path, meta)
            if self.config.early_stopping and best:
                checkpoint.save(net, self.config, self.best_path, meta)
        except OSError as e:
            kept = (Message("checkpoint_intact", {"epoch": self.saved_epoch}) if self.saved_epoch is not None
                    else Message("no_earlier_checkpoint"))
            raise CheckpointWriteError("checkpoint_write_failed", epoch=epoch, folder=self.path.parent,
                                       why=str(e.strerror or e), kept=kept) from e
        names = (self.path.name, self.best_path.name) if self.config.early_stopping and best else (self.path.name,)
        self.store.keep_checkpoint(self.run_id, names, epoch)
        self.saved_epoch = epoch

    def save_final(self, result: TrainResult) -> None:
        """The last epoch's checkpoint already holds a completed run's weights. Otherwise save the final
        ones: the best epoch's after early stopping, or where a stop request ended the run. A diverged run
        keeps its last good epoch."""
        already_saved = result.status == "completed" and not self.config.early_stopping
        if result.status == "diverged" or not result.steps or already_saved:
            return
        last = result.history[-1] if result.history else None
        self.save(result.net, last.epoch if last else 0, last.step if last else 0)
