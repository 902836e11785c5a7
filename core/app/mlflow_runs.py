"""Runs into an MLflow tracking store (an optional extra: `pip install mlflow-skinny==3.17.2`, checked to install
beside the studio's pins): each run becomes an MLflow run of the experiment "MindSpore Training Studio" with its
settings as params, its step loss, epoch figures, validations and learning-rate changes as metrics with their
steps, and its studio id, status, source and owner as tags. MLflow 3 keeps new data in a database
(`sqlite:///mlflow.db`); its folder store is in maintenance mode and refuses new runs."""
from __future__ import annotations

import json
import os
from pathlib import Path

from core.app.run_tables import RunTables, run_tables
from core.messages import ExplainedValueError
from core.runs.store import RunStore

__all__ = ["EXPERIMENT", "tracking_uri", "write_mlflow"]

EXPERIMENT = "MindSpore Training Studio"
BATCH = 1000  # MLflow's limit of metrics per log_batch
EPOCH_FIGURES = ("train_loss", "train_acc", "val_loss", "val_acc", "epoch_seconds", "samples_per_s")
ENDED = {"completed": "FINISHED", "early_stopped": "FINISHED", "failed": "FAILED", "diverged": "FAILED"}


def tracking_uri(out: str | os.PathLike) -> str:
    """A tracking URI as given, or a SQLite database file's path as one."""
    text = str(out)
    return text if "://" in text else f"sqlite:///{Path(text).expanduser().resolve()}"


def write_mlflow(store: RunStore, run_ids: list[str], out: str | os.PathLike) -> list[str]:
    """Log the runs into the tracking store at out; the MLflow run ids, in order."""
    try:
        from mlflow import MlflowClient  # deferred: an optional extra, 5 s to import
    except ImportError:
        raise ExplainedValueError("mlflow_missing") from None
    client = MlflowClient(tracking_uri=tracking_uri(out))
    experiment = client.get_experiment_by_name(EXPERIMENT)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(EXPERIMENT)
    return [_log_run(client, experiment_id, run_tables(store, run_id)) for run_id in run_ids]


def _log_run(client, experiment_id: str, t: RunTables) -> str:
    from mlflow.entities import Param  # deferred: as MlflowClient

    run = t.runs.iloc[0]
    started = int((run["started"] or run["created"]) * 1000)
    made = client.create_run(experiment_id, start_time=started, run_name=str(run["name"]),
                             tags={"studio.run_id": run["run_id"], "studio.status": run["status"],
                                   "studio.source": run["source"], "studio.owner": run["owner"] or ""})
    settings = json.loads(run["script_settings"]) if run["script_settings"] else json.loads(run["config"])
    client.log_batch(made.info.run_id, params=[Param(str(k), json.dumps(v) if isinstance(v, (list, dict)) else str(v))
                                               for k, v in settings.items()])
    metrics = _metrics(t, started)
    for i in range(0, len(metrics), BATCH):
        client.log_batch(made.info.run_id, metrics=metrics[i:i + BATCH])
    ended = run["finished"]
    if ended is not None and ended == ended:
        client.set_terminated(made.info.run_id, ENDED.get(run["status"], "KILLED"), end_time=int(ended * 1000))
    return made.info.run_id


def _metrics(t: RunTables, started: int) -> list:
    """Every recorded figure as MLflow metrics with their steps (epochs for the epoch figures)."""
    from mlflow.entities import Metric  # deferred: as MlflowClient

    def at(elapsed) -> int:
        return started + int((elapsed if elapsed == elapsed and elapsed is not None else 0) * 1000)
    metrics = [Metric("loss", float(s.loss), at(s.elapsed), int(s.step)) for s in t.steps.itertuples()
               if s.loss == s.loss]
    metrics += [Metric(f"epoch_{key}", float(getattr(e, key)), at(e.elapsed), int(e.epoch))
                for e in t.epochs.itertuples() for key in EPOCH_FIGURES
                if getattr(e, key) is not None and getattr(e, key) == getattr(e, key)]
    metrics += [Metric(f"step_{key}", float(getattr(v, key)), started, int(v.step))
                for v in t.validations.itertuples() for key in ("val_loss", "val_acc")]
    return metrics + [Metric(c.setting, float(c.value), started, int(c.step))  # "learning_rate", "momentum", ...
                      for c in t.setting_changes.itertuples()]
