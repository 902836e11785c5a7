"""A sweep's Optuna study, in the run store's own database (Optuna's RDB storage: SQLite or the team's
PostgreSQL): opened with the sweep's sampler and pruner, its settings from a trial's parameters, and the pruning
reports of a run's epochs (TrialReporter, in the worker)."""
from __future__ import annotations

from typing import Any

from core.messages import ExplainedValueError
from core.runs.rows import Run
from core.runs.store import RunStore
from core.runs.sweeps.spec import SweepSpec
from core.training.events import Callback, EpochMetrics

__all__ = ["study_storage", "load", "spec_of", "trial_settings", "distributions", "sampler", "pruner", "copy_studies",
           "TrialReporter"]


def study_storage(store: RunStore):
    return store.optuna_storage()


def copy_studies(source: RunStore, target: RunStore) -> int:
    """Copy the Optuna study of every sweep of source into target's database; how many were copied."""
    import optuna  # deferred: Optuna loads only where a sweep is used
    copied = 0
    for row in source.sweeps():
        try:
            load(source, row.id, SweepSpec.from_json(row.spec))  # a store's older sweeps.sqlite is read in first
        except (KeyError, ValueError, TypeError):
            continue  # a sweep whose study is gone (or whose spec this code cannot read): its runs are copied
        optuna.copy_study(from_study_name=row.id, from_storage=study_storage(source), to_storage=study_storage(target))
        copied += 1
    return copied


def _legacy_study(store: RunStore, sweep_id: str) -> bool:
    """A sweep of a store from before the studies moved into its database (they were in sweeps.sqlite beside
    it): copy its study in. Whether there was one."""
    import optuna  # deferred: Optuna loads only where a sweep is used
    old = store.root / "sweeps.sqlite"
    if not old.exists():
        return False
    try:
        optuna.copy_study(from_study_name=sweep_id, from_storage=f"sqlite:///{old}", to_storage=study_storage(store))
    except KeyError:
        return False
    return True


def sampler(spec: SweepSpec):
    import optuna  # deferred: Optuna loads only where a sweep is used
    if spec.sampler == "grid":
        return optuna.samplers.GridSampler({s.name: list(range(len(s.values))) for s in spec.spaces},
                                           seed=spec.base.seed)
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=spec.base.seed)
    return optuna.samplers.TPESampler(seed=spec.base.seed, n_startup_trials=min(5, max(spec.trials // 3, 1)))


def pruner(spec: SweepSpec):
    import optuna  # deferred: Optuna loads only where a sweep is used
    if not spec.prune:
        return optuna.pruners.NopPruner()
    return optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)


def distributions(spec: SweepSpec) -> dict:
    import optuna  # deferred: Optuna loads only where a sweep is used
    d: dict[str, optuna.distributions.BaseDistribution] = {}
    for s in spec.spaces:
        if s.low is not None and s.high is not None and s.name in ("batch_size", "epochs", "patience"):
            d[s.name] = optuna.distributions.IntDistribution(int(s.low), int(s.high), log=s.log)
        elif s.low is not None and s.high is not None:
            d[s.name] = optuna.distributions.FloatDistribution(s.low, s.high, log=s.log)
        else:  # choices as their index: Optuna keeps plain values; ours may be tuples (hidden)
            d[s.name] = optuna.distributions.CategoricalDistribution(list(range(len(s.values))))
    return d


def trial_settings(spec: SweepSpec, params: dict) -> dict[str, Any]:
    out = {}
    for s in spec.spaces:
        v = params[s.name]
        out[s.name] = s.values[v] if not s.is_range else (int(v) if isinstance(v, int) else float(v))
    return out


def load(store: RunStore, sweep_id: str, spec: SweepSpec):
    import optuna  # deferred: Optuna loads only where a sweep is used
    storage = study_storage(store)
    try:
        return optuna.load_study(study_name=sweep_id, storage=storage, sampler=sampler(spec), pruner=pruner(spec))
    except KeyError:
        if not _legacy_study(store, sweep_id):
            raise
    return optuna.load_study(study_name=sweep_id, storage=storage, sampler=sampler(spec), pruner=pruner(spec))


def spec_of(store: RunStore, sweep_id: str) -> SweepSpec:
    row = store.sweep(sweep_id)
    if row is None:
        raise ExplainedValueError("sweep_gone", sweep=sweep_id)
    return SweepSpec.from_json(row.spec)


class TrialReporter(Callback):
    """Reports each epoch's validation accuracy of a setting's first seed to its Optuna trial; when the pruner
    says stop, asks the run to stop and marks it pruned."""

    critical = False

    def __init__(self, store: RunStore, run: Run):
        if not run.sweep or run.trial is None:
            raise ValueError(f"run {run.id} is not a sweep's: it reports to no pruner")
        self.store, self.run, self.sweep_id, self.trial = store, run, run.sweep, run.trial
        self.spec = spec_of(store, run.sweep)
        self.pruned = False

    def on_epoch(self, e: EpochMetrics) -> None:
        if e.val_acc is None or self.pruned:
            return
        import optuna  # deferred: Optuna loads only where a sweep is used
        study = load(self.store, self.sweep_id, self.spec)
        storage = study_storage(self.store)  # the storage's own public API: a trial's id from its study and number
        trial_id = storage.get_trial_id_from_study_id_trial_number(storage.get_study_id_from_name(self.sweep_id),
                                                                   self.trial)
        trial = optuna.trial.Trial(study, trial_id)
        trial.report(e.val_acc, e.epoch)
        if trial.should_prune():
            self.pruned = True
            self.store.log(self.run.id, f"pruned after epoch {e.epoch}: validation accuracy {e.val_acc:.4f} is "
                                        "below the median of the other settings at this epoch")
            self.store.request(self.run.id, "stop")

    @staticmethod
    def wanted(store: RunStore, run: Run) -> bool:
        """Whether run reports to a pruner: the first seed of a setting of a sweep that prunes."""
        if not run.sweep:
            return False
        return run.trial_seed == 0 and spec_of(store, run.sweep).prune
