"""Comparing runs: which settings differ, and their curves on a common axis (no Streamlit here)."""
from __future__ import annotations

from dataclasses import fields

from core.config import TrainConfig
from core.runs.rows import Run
from core.runs.store import RunStore

AXES = ("step", "epoch", "elapsed")  # elapsed: seconds since the run started


def config_differences(configs: list[TrainConfig]) -> set[str]:
    """Names of the settings whose values are not all equal."""
    return {f.name for f in fields(TrainConfig) if len({repr(getattr(c, f.name)) for c in configs}) > 1}


EPOCH_FIGURES = ("train_loss", "val_loss", "train_acc", "val_acc")


def curves(store: RunStore, run_ids: list[str], axis: str, max_points: int = 1500) -> list[dict]:
    """Long-format rows {run, x, metric, value}: the step loss by step or elapsed time; the epochs' loss and
    accuracy by epoch, elapsed time, or step (at each epoch's last step); by step, the validations between epochs
    too."""
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; choose one of {', '.join(AXES)}")
    rows = []
    for run_id in run_ids:
        if axis in ("step", "elapsed"):
            for s in store.steps(run_id, max_points=max_points):
                rows.append({"run": run_id, "x": getattr(s, axis), "metric": "step loss", "value": s.loss})
        rows += _epoch_rows(store, run_id, axis)
        if axis == "step":
            rows += [{"run": run_id, "x": v.step, "metric": m, "value": getattr(v, m)}
                     for v in store.validations(run_id) for m in ("val_loss", "val_acc")
                     if getattr(v, m) is not None]  # an imported run may record only its accuracy
    return rows


def _epoch_rows(store: RunStore, run_id: str, axis: str) -> list[dict]:
    """The epochs' figures at their epoch, elapsed time, or last step. By step, a run that validates between
    epochs has its validation figures from the validations (the epoch's own is among them)."""
    run = store.get(run_id)
    per_epoch = run.total_steps // run.config.epochs if run is not None and run.config.epochs else 0
    if axis == "step" and not per_epoch:
        return []
    shown: tuple[str, ...] = EPOCH_FIGURES
    if axis == "step" and store.validations(run_id):
        shown = ("train_loss", "train_acc")
    rows = []
    for e in store.epochs(run_id):
        x = e.epoch * per_epoch if axis == "step" else getattr(e, axis)
        rows += [{"run": run_id, "x": x, "metric": m, "value": getattr(e, m)} for m in shown
                 if getattr(e, m) is not None and getattr(e, m) == getattr(e, m)]
    return rows


def summary(run: Run) -> dict:
    """Final figures of a run for the comparison table."""
    return {"status": run.status, "epochs": run.epoch, "best val acc": run.best_val_acc,
            "best val loss": run.best_val_loss, "best epoch": run.best_epoch,
            "duration s": round(run.duration, 1) if run.duration else None}
