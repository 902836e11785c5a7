"""What a run recorded, as tables (pandas DataFrames, no Streamlit here): the run itself, every step, every epoch,
the validations, the learning-rate changes and the layer statistics, each row carrying its run's id so that the
tables of several runs stack. The exports (Parquet, CSV, TensorBoard, the HTML report) read them from here."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass

import pandas as pd

from core.runs.rows import Run
from core.runs.store import RunStore

__all__ = ["TABLES", "RunTables", "run_tables", "stacked"]

TABLES = ("runs", "steps", "epochs", "validations", "setting_changes", "layer_stats")


@dataclass(frozen=True)
class RunTables:
    runs: pd.DataFrame
    steps: pd.DataFrame
    epochs: pd.DataFrame
    validations: pd.DataFrame
    setting_changes: pd.DataFrame
    layer_stats: pd.DataFrame

    def named(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLES}


def run_row(run: Run) -> dict:
    """The run's own columns: who, what, when, how it ended, its settings (as JSON)."""
    return {"run_id": run.id, "name": run.name, "status": str(run.status), "source": run.source,
            "owner": run.submitter, "created": run.created, "started": run.started, "finished": run.finished,
            "epochs_done": run.epoch, "steps_done": run.step, "best_val_acc": run.best_val_acc,
            "best_val_loss": run.best_val_loss, "best_epoch": run.best_epoch, "message": run.message,
            "config": run.config.to_json(), "script_settings": json.dumps(run.params) if run.params else None}


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def run_tables(store: RunStore, run_id: str) -> RunTables:
    """Every record of one run (RunGone when it is not in the store); steps in full, not downsampled."""
    run = store.existing(run_id)
    steps = [{"run_id": run_id, "step": s.step, "epoch": s.epoch, "loss": s.loss, "elapsed": s.elapsed}
             for s in store.steps(run_id, max_points=sys.maxsize)]
    epochs = [{"run_id": run_id, **{k: v for k, v in asdict(e).items() if k not in ("step", "eta", "best")}}
              for e in store.epochs(run_id)]
    validations = [{"run_id": run_id, "step": v.step, "epoch": v.epoch, "val_loss": v.val_loss, "val_acc": v.val_acc}
                   for v in store.validations(run_id)]
    changes = [{"run_id": run_id, "step": c.step, "setting": c.setting, "value": c.value, "replayed": c.replayed}
               for c in store.setting_changes(run_id)]
    layers = [{"run_id": run_id, **{k: list(v) if isinstance(v, tuple) else v for k, v in s.to_dict().items()}}
              for s in store.layer_stats(run_id)]
    return RunTables(
        runs=pd.DataFrame([run_row(run)]),
        steps=_frame(steps, ["run_id", "step", "epoch", "loss", "elapsed"]),
        epochs=_frame(epochs, ["run_id", "epoch", "train_loss", "train_acc", "val_loss", "val_acc", "epoch_seconds",
                               "samples_per_s", "elapsed"]),
        validations=_frame(validations, ["run_id", "step", "epoch", "val_loss", "val_acc"]),
        setting_changes=_frame(changes, ["run_id", "step", "setting", "value", "replayed"]),
        layer_stats=_frame(layers, ["run_id", "epoch", "param", "kind", "mean", "std", "min", "max", "norm", "zeros",
                                    "hist_edges", "hist_counts"]))


def stacked(store: RunStore, run_ids: list[str]) -> RunTables:
    """The tables of several runs, one above the other."""
    parts = [run_tables(store, run_id) for run_id in run_ids]
    return RunTables(**{name: _stack([getattr(p, name) for p in parts]) for name in TABLES})


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames one above the other, the empty ones (a run without validations) left out: pandas stops
    counting them when it types the columns; one kept when all are empty, for its columns."""
    return pd.concat([f for f in frames if not f.empty] or frames[:1], ignore_index=True)
