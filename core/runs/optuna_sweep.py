"""Sweeps: a named search over settings with Optuna (ask-and-tell), each setting trained as a seed group of
queued runs; a pruner fed with each epoch's validation accuracy stops bad settings early (shown as pruned).

The study lives in the run store's own database (Optuna's RDB storage: SQLite or the team's PostgreSQL), so a
sweep survives a restart and carries on on any host: whoever dispatches (the app server, or `python -m core.cli.sweep`
while it waits) advances every open sweep each tick — tells Optuna the settings whose runs have all ended, and
asks for new ones while fewer than the sweep's trials were asked. Grid and random searches keep at most
ASK_AT_ONCE settings open (queued or training), so a sweep of any allowed size never floods the queue; TPE keeps
as many open as there are slots, so that each new setting learns from the finished ones."""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from typing import Any

from core.config import ConfigError, TrainConfig, parse_field
from core.messages import ExplainedValueError, Message
from core.runs.run_queue import MAX_SWEEPS_ENV, RunQueue, max_queued_setting, max_sweeps_setting
from core.runs.rows import ACTIVE, FINISHED, QUEUED, Run, SweepRow
from core.runs.store import DatabaseError, RunStore, shown_url
from core.training.events import Callback, EpochMetrics

__all__ = ["Space", "SweepSpec", "parse_space", "create", "advance_all", "advance", "trial_rows", "TrialReporter",
           "SAMPLERS", "SOURCE", "Setting", "SweepInfo", "list_sweeps", "settings"]

SOURCE = "sweep"
SAMPLERS = ("grid", "random", "tpe")
NUMERIC = ("learning_rate", "momentum", "weight_decay", "batch_size", "epochs", "val_fraction", "patience")
CHOICE = ("network", "optimizer", "loss", "lr_schedule", "augment", "style", "mode", "hidden")
SWEEPABLE = NUMERIC + CHOICE
MAX_TRIALS = 200
MAX_SEEDS = 10
ASK_AT_ONCE = 20  # settings open at once, and asked for in one advance: a large sweep never floods the queue


@dataclass(frozen=True)
class Space:
    """The values one setting takes: a list (grid, or a choice for random/TPE) or a range (random/TPE)."""
    name: str
    values: tuple = ()
    low: float | None = None
    high: float | None = None
    log: bool = False

    @property
    def is_range(self) -> bool:
        return self.low is not None


def parse_space(text: str) -> Space:
    """"learning_rate=0.1,0.01" (a list) or "learning_rate=1e-4:1e-1:log" (a range; ":lin" or nothing: linear)."""
    name, sep, rest = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not rest.strip():
        raise ExplainedValueError("sweep_space_syntax", text=text)
    if name not in SWEEPABLE:
        raise ExplainedValueError("sweep_field", name=name, fields=", ".join(SWEEPABLE))
    if ":" in rest and name in NUMERIC:
        parts = rest.split(":")
        try:
            low, high = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            raise ExplainedValueError("sweep_space_syntax", text=text) from None
        log = len(parts) > 2 and parts[2].strip() == "log"
        if not (math.isfinite(low) and math.isfinite(high) and low < high) or (log and low <= 0):
            raise ExplainedValueError("sweep_range", text=text)
        return Space(name, low=low, high=high, log=log)
    sep_char = ";" if name == "hidden" else ","  # "64,64;128" lists MLP shapes
    try:
        values = tuple(parse_field(name, v.strip()) for v in rest.split(sep_char) if v.strip())
    except ConfigError as e:
        raise ExplainedValueError("sweep_value", name=name, why="; ".join(e.errors.values())) from None
    if not values:
        raise ExplainedValueError("sweep_space_syntax", text=text)
    return Space(name, values=tuple(dict.fromkeys(values)))


@dataclass(frozen=True)
class SweepSpec:
    base: TrainConfig
    spaces: tuple[Space, ...]
    sampler: str = "grid"
    trials: int = 0            # 0 with a grid: every combination
    seeds: int = 1             # runs per setting (a seed group): seeds base.seed, base.seed + 1, ...
    prune: bool = False
    name: str = ""

    def errors(self) -> list[Message]:
        out = []
        if self.sampler not in SAMPLERS:
            out.append(Message("sweep_sampler", {"sampler": self.sampler, "choices": ", ".join(SAMPLERS)}))
        if not self.spaces:
            out.append(Message("sweep_nothing_varies"))
        if self.sampler == "grid" and any(s.is_range for s in self.spaces):
            out.append(Message("sweep_grid_needs_lists"))
        if not 1 <= self.seeds <= MAX_SEEDS or not 0 <= self.trials <= MAX_TRIALS:
            out.append(Message("sweep_counts", {"seeds": MAX_SEEDS, "trials": MAX_TRIALS}))
        if self.sampler != "grid" and self.trials == 0:
            out.append(Message("sweep_counts", {"seeds": MAX_SEEDS, "trials": MAX_TRIALS}))
        if self.base.val_fraction == 0:
            out.append(Message("sweep_needs_validation"))
        if self.sampler == "grid" and not self.trials and self.planned_trials > MAX_TRIALS:
            out.append(Message("sweep_grid_too_big", {"n": self.planned_trials, "most": MAX_TRIALS}))
        return out

    @property
    def planned_trials(self) -> int:
        if self.sampler == "grid":
            grid = math.prod(len(s.values) for s in self.spaces)
            return min(grid, self.trials) if self.trials else grid
        return self.trials

    def to_json(self) -> str:
        d = asdict(self)
        d["base"] = self.base.to_dict()
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "SweepSpec":
        d = json.loads(text)
        d["base"] = TrainConfig.from_dict(d["base"])
        d["spaces"] = tuple(Space(s["name"], tuple(tuple(v) if isinstance(v, list) else v for v in s["values"]),
                                  s["low"], s["high"], s["log"]) for s in d["spaces"])
        return cls(**d)


# --- Optuna ------------------------------------------------------------------------------------------------------
def _storage(store: RunStore):
    return store.optuna_storage()


def copy_studies(source: RunStore, target: RunStore) -> int:
    """Copy the Optuna study of every sweep of source into target's database; how many were copied."""
    import optuna  # deferred: as in _storage
    copied = 0
    for row in source.sweeps():
        try:
            _study(source, row.id, SweepSpec.from_json(row.spec))  # a store's older sweeps.sqlite is read in first
        except (KeyError, ValueError, TypeError):
            continue  # a sweep whose study is gone (or whose spec this code cannot read): its runs are copied
        optuna.copy_study(from_study_name=row.id, from_storage=_storage(source), to_storage=_storage(target))
        copied += 1
    return copied


def _legacy_study(store: RunStore, sweep_id: str) -> bool:
    """A sweep of a store from before the studies moved into its database (they were in sweeps.sqlite beside
    it): copy its study in. Whether there was one."""
    import optuna  # deferred: as in _storage
    old = store.root / "sweeps.sqlite"
    if not old.exists():
        return False
    try:
        optuna.copy_study(from_study_name=sweep_id, from_storage=f"sqlite:///{old}", to_storage=_storage(store))
    except KeyError:
        return False
    return True


def _sampler(spec: SweepSpec):
    import optuna  # deferred: as in _storage
    if spec.sampler == "grid":
        return optuna.samplers.GridSampler({s.name: list(range(len(s.values))) for s in spec.spaces},
                                           seed=spec.base.seed)
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=spec.base.seed)
    return optuna.samplers.TPESampler(seed=spec.base.seed, n_startup_trials=min(5, max(spec.trials // 3, 1)))


def _pruner(spec: SweepSpec):
    import optuna  # deferred: as in _storage
    if not spec.prune:
        return optuna.pruners.NopPruner()
    return optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)


def _distributions(spec: SweepSpec) -> dict:
    import optuna  # deferred: as in _storage
    d: dict[str, optuna.distributions.BaseDistribution] = {}
    for s in spec.spaces:
        if s.low is not None and s.high is not None and s.name in ("batch_size", "epochs", "patience"):
            d[s.name] = optuna.distributions.IntDistribution(int(s.low), int(s.high), log=s.log)
        elif s.low is not None and s.high is not None:
            d[s.name] = optuna.distributions.FloatDistribution(s.low, s.high, log=s.log)
        else:  # choices as their index: Optuna keeps plain values; ours may be tuples (hidden)
            d[s.name] = optuna.distributions.CategoricalDistribution(list(range(len(s.values))))
    return d


def _settings(spec: SweepSpec, params: dict) -> dict[str, Any]:
    out = {}
    for s in spec.spaces:
        v = params[s.name]
        out[s.name] = s.values[v] if not s.is_range else (int(v) if isinstance(v, int) else float(v))
    return out


def _study(store: RunStore, sweep_id: str, spec: SweepSpec):
    import optuna  # deferred: as in _storage
    storage = _storage(store)
    try:
        return optuna.load_study(study_name=sweep_id, storage=storage, sampler=_sampler(spec), pruner=_pruner(spec))
    except KeyError:
        if not _legacy_study(store, sweep_id):
            raise
    return optuna.load_study(study_name=sweep_id, storage=storage, sampler=_sampler(spec), pruner=_pruner(spec))


# --- the sweep's life ------------------------------------------------------------------------------------------
def create(store: RunStore, spec: SweepSpec, submitter: str) -> str:
    """Record the sweep and its Optuna study; its first settings are queued by advance(). Refused while its
    submitter has STUDIO_MAX_OPEN_SWEEPS_PER_PERSON sweeps open."""
    import optuna  # deferred: as in _storage
    _check_room_for_a_sweep(store, submitter)
    errors = spec.errors()
    if errors:
        raise ExplainedValueError("sweep_invalid", why=" ".join(m.say() for m in errors))
    for s in spec.spaces:  # every value must make a valid config
        for v in (s.values or (s.low, s.high)):
            bad = spec.base.with_(**{s.name: int(v) if s.name in ("batch_size", "epochs", "patience") and s.is_range
                                     else v}).errors()
            if bad:
                raise ExplainedValueError("sweep_value", name=s.name, why="; ".join(bad.values()))
    sweep_id = "sweep-" + time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1e6) % 1_000_000:06d}"
    try:
        optuna.create_study(study_name=sweep_id, storage=_storage(store), direction="maximize",
                            sampler=_sampler(spec), pruner=_pruner(spec))
    except optuna.exceptions.StorageInternalError as e:  # Optuna's word for its database failing (a full disk)
        why = str(e.__cause__ or e).strip().splitlines()[0]
        raise DatabaseError("database_full" if "full" in why or "I/O" in why else "database_broken",
                            url=shown_url(store.url), why=why) from None
    store.add_sweep(SweepRow(sweep_id, spec.name or sweep_id, spec.to_json(), submitter, time.time(), "open"))
    advance(store, sweep_id)
    return sweep_id


def _check_room_for_a_sweep(store: RunStore, submitter: str) -> None:
    most = max_sweeps_setting()
    mine = [r for r in store.sweeps(status="open") if r.submitter == submitter]
    if len(mine) >= most:
        raise ExplainedValueError("sweeps_full_for_person", n=len(mine), env=MAX_SWEEPS_ENV)


def open_sweeps(store: RunStore) -> list[tuple[str, SweepSpec, str]]:
    return [(r.id, SweepSpec.from_json(r.spec), r.submitter) for r in store.sweeps(status="open")]


def advance_all(store: RunStore) -> None:
    for sweep_id, spec, submitter in open_sweeps(store):
        advance(store, sweep_id, spec, submitter)


def sweep_runs(store: RunStore, sweep_id: str) -> list[Run]:
    return store.sweep_runs(sweep_id)


def advance(store: RunStore, sweep_id: str, spec: SweepSpec | None = None, submitter: str | None = None) -> None:
    """Tell Optuna what ended, stop what was pruned, ask for (and queue) new settings; close the sweep when
    every planned setting has an outcome. One advancer at a time per store, on every host (the store's
    "sweeps" lock): the app servers' dispatchers, a page that just created the sweep and a waiting command line
    would otherwise each count the settings asked so far and ask for more."""
    with store.exclusive("sweeps"):
        _advance(store, sweep_id, spec, submitter)


def _advance(store: RunStore, sweep_id: str, spec: SweepSpec | None, submitter: str | None) -> None:
    if spec is None:
        found = [(s, w) for i, s, w in open_sweeps(store) if i == sweep_id]
        if not found:
            return
        spec, submitter = found[0]
    import optuna  # deferred: as in _storage
    study = _study(store, sweep_id, spec)
    runs = sweep_runs(store, sweep_id)
    by_trial: dict[int, list[Run]] = {}
    for r in runs:
        if r.trial is not None:  # every run of a sweep has its trial
            by_trial.setdefault(r.trial, []).append(r)
    open_trials = 0
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        group = by_trial.get(trial.number, [])
        if any(r.status == "pruned" for r in group):
            _stop_group(store, group)
        if group and all(r.status in FINISHED for r in group):
            _tell(study, trial.number, group)
        else:
            open_trials += 1
    asked, new = len(study.trials), 0
    # settings open (queued or training) at once: a few ahead of what can run, so that a sweep of any allowed
    # size never floods the queue (TPE: as many as there are slots, each new one learning from the finished)
    limit = min(spec.planned_trials, ASK_AT_ONCE) if spec.sampler != "tpe" else max(RunQueue(store).slots, 1)
    # the submitter's queued runs, every sweep's included, stay within their cap: the sweep waits, not the queue
    room = max_queued_setting() - store.queued_count(submitter or "")
    while asked < spec.planned_trials and open_trials < limit and new < ASK_AT_ONCE and \
            room >= min(spec.seeds, max_queued_setting()):
        trial = study.ask(_distributions(spec))
        settings = _settings(spec, trial.params)
        for name, value in settings.items():  # the values themselves, for Optuna's own dashboard and API: a list's
            trial.set_user_attr(name, list(value) if isinstance(value, tuple) else value)  # param is its index
        _queue_group(store, sweep_id, spec, trial.number, settings, submitter or "")
        asked, open_trials, new, room = asked + 1, open_trials + 1, new + 1, room - spec.seeds
    if asked >= spec.planned_trials and open_trials == 0:
        store.set_sweep_status(sweep_id, "done")


def cancel(store: RunStore, sweep_id: str) -> int:
    """Close an open sweep: no more settings are asked for, its queued runs are cancelled and its training runs
    asked to stop. How many runs it cancelled or stopped."""
    with store.exclusive("sweeps"):  # not while an advancer queues its next settings
        store.set_sweep_status(sweep_id, "cancelled")
    queue, ended = RunQueue(store), 0
    for run in store.sweep_runs(sweep_id):
        if run.status == QUEUED and queue.cancel(run.id):
            ended += 1
        elif run.status in ACTIVE and run.request != "stop":
            store.request(run.id, "stop")
            ended += 1
    return ended


def _queue_group(store: RunStore, sweep_id: str, spec: SweepSpec, number: int, settings: dict, submitter: str):
    queue = RunQueue(store)
    label = ", ".join(f"{k}={v}" for k, v in settings.items())
    for k in range(spec.seeds):
        config = spec.base.with_(**settings, seed=spec.base.seed + k)
        run_id = queue.submit(config, f"{spec.name or sweep_id} #{number} {label} seed {config.seed}"[:80], SOURCE,
                              submitter, capped=False)  # a sweep holds at most ASK_AT_ONCE settings open
        store.update(run_id, sweep=sweep_id, trial=number, trial_seed=k)


def _stop_group(store: RunStore, group: list[Run]) -> None:
    """A pruned setting: its other seeds are cancelled (queued) or asked to stop (training)."""
    queue = RunQueue(store)
    for r in group:
        if r.status == QUEUED:
            queue.cancel(r.id)
        elif r.status in ACTIVE and r.request != "stop":
            store.request(r.id, "stop")


def _tell(study, number: int, group: list[Run]) -> None:
    import optuna  # deferred: as in _storage
    accuracies = [r.best_val_acc for r in group if r.status in ("completed", "early_stopped")]
    outcome: dict[str, Any]
    if any(r.status == "pruned" for r in group):
        outcome = dict(state=optuna.trial.TrialState.PRUNED)
    elif len(accuracies) == len(group) and None not in accuracies:
        outcome = dict(values=sum(a for a in accuracies if a is not None) / len(group))
    else:
        outcome = dict(state=optuna.trial.TrialState.FAIL)
    try:
        study.tell(number, **outcome)
    except RuntimeError as e:
        # After the grid's last setting, GridSampler stops the optimize loop, which ask-and-tell does not run:
        # Study.stop raises. Optuna has stored the outcome already (in a `finally`), so that is all it says.
        if "Study.stop" not in str(e):
            raise


def trial_rows(store: RunStore, sweep_id: str) -> list[dict]:
    """Every run of the sweep: its setting, seed, status and best validation accuracy (the CLI's --json)."""
    spec = next((s for i, s, _ in open_sweeps(store) if i == sweep_id), None) or _spec(store, sweep_id)
    varied = [s.name for s in spec.spaces]
    return [{"trial": r.trial, "seed": r.config.seed, "config": {k: getattr(r.config, k) for k in varied},
             "status": r.status, "best_val_acc": r.best_val_acc, "run_id": r.id, "executor": r.executor}
            for r in sweep_runs(store, sweep_id)]


def _spec(store: RunStore, sweep_id: str) -> SweepSpec:
    row = store.sweep(sweep_id)
    if row is None:
        raise ExplainedValueError("sweep_gone", sweep=sweep_id)
    return SweepSpec.from_json(row.spec)


MIN_TRIALS_FOR_IMPORTANCE = 3


def importances(store: RunStore, info: SweepInfo) -> dict[str, float] | None:
    """How much each varied setting mattered to the sweep's objective (Optuna's fANOVA, seeded: the same
    sweep gives the same figures), largest first; None while fewer than two settings vary or fewer than
    MIN_TRIALS_FOR_IMPORTANCE settings have finished."""
    import optuna  # deferred: as in _storage (and fANOVA imports scikit-learn)
    if len(info.spec.spaces) < 2:
        return None
    study = optuna.load_study(study_name=info.id, storage=_storage(store))
    finished = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(finished) < MIN_TRIALS_FOR_IMPORTANCE:
        return None
    fanova = optuna.importance.FanovaImportanceEvaluator(seed=0)
    found = optuna.importance.get_param_importances(study, evaluator=fanova)
    return {name: float(value) for name, value in found.items()}


def is_done(store: RunStore, sweep_id: str) -> bool:
    row = store.sweep(sweep_id)
    return row is not None and row.status == "done"


# --- in the worker: pruning ----------------------------------------------------------------------------------------
class TrialReporter(Callback):
    """Reports each epoch's validation accuracy of a setting's first seed to its Optuna trial; when the pruner
    says stop, asks the run to stop and marks it pruned."""

    critical = False

    def __init__(self, store: RunStore, run: Run):
        if not run.sweep or run.trial is None:
            raise ValueError(f"run {run.id} is not a sweep's: it reports to no pruner")
        self.store, self.run, self.sweep_id, self.trial = store, run, run.sweep, run.trial
        self.spec = _spec(store, run.sweep)
        self.pruned = False

    def on_epoch(self, e: EpochMetrics) -> None:
        if e.val_acc is None or self.pruned:
            return
        import optuna  # deferred: as in _storage
        study = _study(self.store, self.sweep_id, self.spec)
        storage = _storage(self.store)  # the storage's own public API: a trial's id from its study and number
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
        return run.trial_seed == 0 and _spec(store, run.sweep).prune


# --- what a sweep page shows -------------------------------------------------------------------------------------
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
