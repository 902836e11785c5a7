"""Where a stored run picks up: the trainer's ResumeState from the run's checkpoint and its metrics."""
from __future__ import annotations

from core.model import checkpoint
from core.runs.store import RunStore
from core.training.resume_state import ResumeState
from core.training.weight_arrays import snapshot

__all__ = ["resume_state"]


def resume_state(store: RunStore, run_id: str, read_only: bool = False) -> ResumeState | None:
    """The run's ResumeState, dropping metrics recorded after its checkpoint (the unfinished epoch). None for
    a run that never wrote a checkpoint (a fresh run). read_only: for the data-parallel ranks besides rank 0,
    which read the same state but leave the store to rank 0."""
    path, best_path = store.file(run_id, "model.ckpt"), store.file(run_id, "best.ckpt")
    if path is None:
        return None
    model = checkpoint.load(path)
    epoch = int(model.meta.get("epoch", 0))
    dropped = 0 if read_only else store.truncate_after(run_id, epoch)
    history = tuple(m for m in store.epochs(run_id) if m.epoch <= epoch)
    step = int(model.meta.get("step") or (history[-1].step if history else 0) or 0)
    best = snapshot(checkpoint.load(best_path).net) if best_path is not None else None
    if not read_only:
        store.log(run_id, f"resuming from the checkpoint of epoch {epoch} (step {step})"
                          + (f"; dropped {dropped} step records of the unfinished epoch" if dropped else ""))
    return ResumeState(epoch=epoch, step=step, weights=snapshot(model.net), history=history, best_weights=best,
                       elapsed=float(history[-1].elapsed or 0.0) if history else 0.0)
