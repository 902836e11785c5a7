"""What a sweep's page and `python -m core.cli.sweep` show: every sweep, its settings best first with their seeds'
spread, each run of it, whether it is done, and how much each varied setting mattered."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.runs.rows import ACTIVE, QUEUED, Run
from core.runs.store import RunStore
from core.runs.sweeps.lifecycle import open_sweeps, sweep_runs
from core.runs.sweeps.spec import SweepSpec
from core.runs.sweeps.study import spec_of, study_storage

__all__ = ["Setting", "SweepInfo", "list_sweeps", "settings", "trial_rows", "is_done", "importances",
           "MIN_TRIALS_FOR_IMPORTANCE"]


def trial_rows(store: RunStore, sweep_id: str) -> list[dict]:
    """Every run of the sweep: its setting, seed, status and best validation accuracy (the CLI's --json)."""
    spec = next((s for i, s, _ in open_sweeps(store) if i == sweep_id), None) or spec_of(store, sweep_id)
    varied = [s.name for s in spec.spaces]
    return [{"trial": r.trial, "seed": r.config.seed, "config": {k: getattr(r.config, k) for k in varied},
             "status": r.status, "best_val_acc": r.best_val_acc, "run_id": r.id, "executor": r.executor}
            for r in sweep_runs(store, sweep_id)]


def is_done(store: RunStore, sweep_id: str) -> bool:
    row = store.sweep(sweep_id)
    return row is not None and row.status == "done"


@dataclass(frozen=True)
class Setting:
    """One setting of a sweep (an Optuna trial) and its seed group."""
    trial: int
    values: dict[str, Any]         # the varied settings
    runs: tuple[Run, ...]          # one per seed
    state: str                     # queued | running | completed | pruned | failed (the group's, as a whole)
    accuracies: tuple[float, ...]  # best validation accuracy of each finished seed

    @property
    def mean(self) -> float | None:
        return sum(self.accuracies) / len(self.accuracies) if self.accuracies else None

    @property
    def spread(self) -> tuple[float, float, float] | None:
        """(min, max, std) of the seeds' best validation accuracy."""
        m = self.mean
        if m is None:
            return None
        std = math.sqrt(sum((a - m) ** 2 for a in self.accuracies) / len(self.accuracies))
        return min(self.accuracies), max(self.accuracies), std


@dataclass(frozen=True)
class SweepInfo:
    id: str
    name: str
    spec: SweepSpec
    submitter: str
    created: float
    status: str                    # open | done


def list_sweeps(store: RunStore) -> list[SweepInfo]:
    """Every sweep of the store, newest first."""
    return [SweepInfo(r.id, r.name, SweepSpec.from_json(r.spec), r.submitter, r.created, r.status)
            for r in store.sweeps()]


def settings(store: RunStore, info: SweepInfo) -> list[Setting]:
    """The sweep's settings, best first (by the seeds' mean best validation accuracy; unfinished last)."""
    groups: dict[int, list[Run]] = {}
    for r in sweep_runs(store, info.id):
        if r.trial is not None:  # every run of a sweep has its trial
            groups.setdefault(r.trial, []).append(r)
    varied = [s.name for s in info.spec.spaces]
    out = []
    for trial, runs in groups.items():
        statuses = {r.status for r in runs}
        state = ("pruned" if "pruned" in statuses else "running" if statuses & set(ACTIVE)
                 else "queued" if QUEUED in statuses else "completed" if statuses <= {"completed", "early_stopped"}
                 else "failed")
        accs = tuple(r.best_val_acc for r in runs if r.status in ("completed", "early_stopped")
                     and r.best_val_acc is not None)
        out.append(Setting(trial, {k: getattr(runs[0].config, k) for k in varied}, tuple(runs), state, accs))
    return sorted(out, key=lambda s: (s.mean is None, -(s.mean or 0.0), s.trial))


MIN_TRIALS_FOR_IMPORTANCE = 3


def importances(store: RunStore, info: SweepInfo) -> dict[str, float] | None:
    """How much each varied setting mattered to the sweep's objective (Optuna's fANOVA, seeded: the same
    sweep gives the same figures), largest first; None while fewer than two settings vary or fewer than
    MIN_TRIALS_FOR_IMPORTANCE settings have finished."""
    import optuna  # deferred: Optuna (and fANOVA, scikit-learn) load only where a sweep is used
    if len(info.spec.spaces) < 2:
        return None
    study = optuna.load_study(study_name=info.id, storage=study_storage(store))
    finished = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(finished) < MIN_TRIALS_FOR_IMPORTANCE:
        return None
    fanova = optuna.importance.FanovaImportanceEvaluator(seed=0)
    found = optuna.importance.get_param_importances(study, evaluator=fanova)
    return {name: float(value) for name, value in found.items()}
