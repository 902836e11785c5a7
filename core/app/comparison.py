"""Comparing runs: which settings differ, and their curves on a common axis (no Streamlit here)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.config import MODES, NETWORKS, OPTIMIZERS, STYLES, TrainConfig
from core.foreign_settings import lineage_settings, stated_settings
from core.runs.rows import Run
from core.runs.store import RunStore

AXES = ("step", "epoch", "elapsed")  # elapsed: seconds since the run started


def config_differences(configs: list[TrainConfig]) -> set[str]:
    """Names of the settings whose values are not all equal, between studio configs (every field stated)."""
    return setting_differences([c.to_dict() for c in configs])


def stated(run: Run) -> dict[str, Any]:
    """The settings a run states, by the config's field names: a studio run's whole config; a script's or an
    imported run's only those its own settings or lineage named (the rest of its config are the studio's
    defaults, which say nothing of how it trained)."""
    config = run.config.to_dict()
    if not run.external:
        return config
    params = run.params or {}
    named = stated_settings(lineage_settings(params) if run.imported else params)
    return {k: config[k] for k in named if k in config}


def setting_differences(settings: list[dict[str, Any]]) -> set[str]:
    """Names of the settings whose stated values are not all equal (a run that does not state one does not count)."""
    names = {k for s in settings for k in s}
    return {k for k in names if len({_same_when_equal(s[k]) for s in settings if k in s}) > 1}


def _same_when_equal(value: Any) -> str:
    """A value to compare by: a float to float32's 7 digits (a summary's 0.009999999776482582 is 0.01)."""
    return f"{value:.7g}" if isinstance(value, float) else repr(value)


CHOICE_AXES = {"network": NETWORKS, "style": STYLES, "mode": MODES, "optimizer": OPTIMIZERS}
NUMBER_AXES = ("learning_rate", "batch_size", "epochs")
FEW_TICKS = 8  # up to this many distinct values: a tick at each, not Plotly's round numbers between them


@dataclass(frozen=True)
class SettingAxis:
    """One axis of the settings' parallel coordinates: a value per run, where its ticks go and what they say.
    A run that does not state the setting sits at its own tick, `unstated`, below the others."""
    name: str
    values: tuple[float, ...]
    tickvals: tuple[float, ...]
    ticktext: tuple[str, ...]


def setting_axes(runs: list[Run], unstated: str) -> list[SettingAxis]:
    """The axes of the settings that at least one of `runs` states, choices first (by their names), then numbers."""
    said = [stated(r) for r in runs]
    axes = [_choice_axis(name, choices, said, unstated) for name, choices in CHOICE_AXES.items()]
    axes += [_number_axis(name, said, unstated) for name in NUMBER_AXES]
    return [a for a in axes if a is not None]


def _choice_axis(name: str, choices: tuple[str, ...], said: list[dict], unstated: str) -> SettingAxis | None:
    known = [s[name] for s in said if s.get(name) in choices]
    if not known:
        return None
    shown = [c for c in choices if c in known]
    at = {c: float(i) for i, c in enumerate(shown)}
    values = tuple(at.get(str(s.get(name)), -1.0) for s in said)
    ticks = [(v, c) for c, v in at.items()] + ([(-1.0, unstated)] if -1.0 in values else [])
    return SettingAxis(name, values, tuple(v for v, _ in ticks), tuple(c for _, c in ticks))


def _number_axis(name: str, said: list[dict], unstated: str) -> SettingAxis | None:
    known = sorted({float(s[name]) for s in said if isinstance(s.get(name), int | float)})
    if not known:
        return None
    low, high = known[0], known[-1]
    below = low - 0.15 * (high - low) if high > low else low - max(abs(low) * 0.5, 1e-3)
    values = tuple(float(s[name]) if isinstance(s.get(name), int | float) else below for s in said)
    shown = known if len(known) <= FEW_TICKS else [low + (high - low) * i / 5 for i in range(6)]
    ticks = [(v, f"{v:.4g}") for v in shown] + ([(below, unstated)] if below in values else [])
    return SettingAxis(name, values, tuple(v for v, _ in ticks), tuple(c for _, c in ticks))


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
