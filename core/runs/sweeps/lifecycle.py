"""A sweep's life: created with its study, advanced, closed when every setting has an outcome or when cancelled.

The study lives in the run store's own database (core.runs.sweeps.study), so a sweep survives a restart and
carries on on any host: whoever dispatches (the app server, or `python -m core.cli.sweep`
while it waits) advances every open sweep each tick — tells Optuna the settings whose runs have all ended, and
asks for new ones while fewer than the sweep's trials were asked. Grid and random searches keep at most
ASK_AT_ONCE settings open (queued or training), so a sweep of any allowed size never floods the queue; TPE keeps
as many open as there are slots, so that each new setting learns from the finished ones."""
from __future__ import annotations

import time
from typing import Any

from core.messages import ExplainedValueError
from core.runs.rows import ACTIVE, FINISHED, QUEUED, Run, SweepRow
from core.runs.run_queue import MAX_SWEEPS_ENV, RunQueue, max_queued_setting, max_sweeps_setting
from core.runs.store import DatabaseError, RunStore, shown_url
from core.runs.sweeps.spec import ASK_AT_ONCE, SOURCE, SweepSpec
from core.runs.sweeps.study import distributions, load, pruner, sampler, study_storage, trial_settings

__all__ = ["create", "advance_all", "advance", "cancel", "open_sweeps", "sweep_runs"]


def create(store: RunStore, spec: SweepSpec, submitter: str) -> str:
    """Record the sweep and its Optuna study; its first settings are queued by advance(). Refused while its
    submitter has STUDIO_MAX_OPEN_SWEEPS_PER_PERSON sweeps open."""
    import optuna  # deferred: Optuna loads only where a sweep is used
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
        optuna.create_study(study_name=sweep_id, storage=study_storage(store), direction="maximize",
                            sampler=sampler(spec), pruner=pruner(spec))
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
    import optuna  # deferred: Optuna loads only where a sweep is used
    study = load(store, sweep_id, spec)
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
        trial = study.ask(distributions(spec))
        settings = trial_settings(spec, trial.params)
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
        # "#1" for Optuna's trial 0: people count from one (the Sweeps table shows the same number)
        run_id = queue.submit(config, f"{spec.name or sweep_id} #{number + 1} {label} seed {config.seed}"[:80], SOURCE,
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
    import optuna  # deferred: Optuna loads only where a sweep is used
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
