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


def curves(store: RunStore, run_ids: list[str], axis: str, max_points: int = 1500) -> list[dict]:
    """Long-format rows {run, x, metric, value}: step loss by step or elapsed time, epoch metrics by epoch
    or elapsed time."""
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; choose one of {', '.join(AXES)}")
    rows = []
    for run_id in run_ids:
        if axis in ("step", "elapsed"):
            for s in store.steps(run_id, max_points=max_points):
                rows.append({"run": run_id, "x": getattr(s, axis), "metric": "step loss", "value": s.loss})
        if axis in ("epoch", "elapsed"):
            for e in store.epochs(run_id):
                for m in ("train_loss", "val_loss", "train_acc", "val_acc"):
                    if getattr(e, m) is not None:
                        rows.append({"run": run_id, "x": getattr(e, axis), "metric": m, "value": getattr(e, m)})
    return rows


def summary(run: Run) -> dict:
    """Final figures of a run for the comparison table."""
    return {"status": run.status, "epochs": run.epoch, "best val acc": run.best_val_acc,
            "best val loss": run.best_val_loss, "best epoch": run.best_epoch,
            "duration s": round(run.duration, 1) if run.duration else None}
