"""A run as TensorBoard event files (tensorboardX), one folder per run, so that `tensorboard --logdir OUT` shows
the runs side by side: scalars (step loss; per epoch train/validation loss and accuracy, time, speed; the
validations between epochs; the learning rate where it changed), the layer statistics as histograms (from their
recorded bins) and norms, and the settings as text and as TensorBoard's HParams."""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from core.app.run_tables import RunTables, run_tables
from core.runs.store import RunStore

__all__ = ["write_tensorboard", "run_folder_name"]


def run_folder_name(name: str, run_id: str) -> str:
    """A folder name for the run: its name made safe for a path, then its id (names may repeat)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "run"
    return f"{safe[:60]}-{run_id}"


def write_tensorboard(store: RunStore, run_ids: list[str], out_dir: str | os.PathLike) -> list[Path]:
    """One event-file folder per run under out_dir; the folders."""
    folders = []
    for run_id in run_ids:
        tables = run_tables(store, run_id)
        folder = Path(out_dir) / run_folder_name(str(tables.runs.loc[0, "name"]), run_id)
        _write_run(tables, folder)
        folders.append(folder)
    return folders


def _write_run(t: RunTables, folder: Path) -> None:
    from tensorboardX import SummaryWriter  # deferred: only an export needs it (and it imports protobuf)

    folder.mkdir(parents=True, exist_ok=True)
    run = t.runs.iloc[0]
    with SummaryWriter(logdir=str(folder)) as w:
        for s in t.steps.itertuples():
            _scalar(w, "loss/step", s.loss, s.step)
        for e in t.epochs.itertuples():
            for tag in ("train_loss", "train_acc", "val_loss", "val_acc", "epoch_seconds", "samples_per_s"):
                _scalar(w, f"epoch/{tag}", getattr(e, tag), e.epoch)
        for v in t.validations.itertuples():
            _scalar(w, "validation/val_loss", v.val_loss, v.step)
            _scalar(w, "validation/val_acc", v.val_acc, v.step)
        for c in t.setting_changes.itertuples():  # "learning_rate", "momentum", "weight_decay"
            _scalar(w, c.setting, c.value, c.step)
        _layers(w, t)
        _settings(w, run)


def _scalar(w, tag: str, value, step) -> None:
    """A scalar as recorded: ±inf and NaN written as such (TensorBoard draws them); a missing value (None: not
    recorded, or a NaN that SQLite keeps as NULL) left out."""
    if value is None:
        return
    w.add_scalar(tag, float(value), int(step))


def _layers(w, t: RunTables) -> None:
    for s in t.layer_stats.itertuples():
        counts, edges = list(s.hist_counts), list(s.hist_edges)
        num = float(sum(counts))
        if num:
            w.add_histogram_raw(f"{s.kind}/{s.param}", min=s.min, max=s.max, num=num, sum=s.mean * num,
                                sum_squares=(s.std ** 2 + s.mean ** 2) * num, bucket_limits=edges[1:],
                                bucket_counts=counts, global_step=s.epoch)
        _scalar(w, f"{s.kind}_norm/{s.param}", s.norm, s.epoch)


def _settings(w, run) -> None:
    from tensorboardX.summary import hparams as hparams_summaries  # deferred: as SummaryWriter
    config = json.loads(run["config"])
    settings = json.loads(run["script_settings"]) if run["script_settings"] else config
    w.add_text("settings", "\n".join(f"    {k}: {v}" for k, v in settings.items()), 0)
    hparams = {k: v if isinstance(v, (int, float, str, bool)) else json.dumps(v) for k, v in settings.items()}
    metrics = {name: float(run[key]) for name, key in (("hparam/best_val_acc", "best_val_acc"),
                                                       ("hparam/best_val_loss", "best_val_loss"))
               if run[key] is not None and math.isfinite(run[key])}
    metrics = metrics or {"hparam/steps_done": float(run["steps_done"])}
    # in this run's own event file (add_hparams would open a second writer in a folder of its own)
    for summary in hparams_summaries(hparams, metrics):
        w.file_writer.add_summary(summary)
    for tag, value in metrics.items():
        w.add_scalar(tag, value)
