"""Sweeps: a named search over settings with Optuna (ask-and-tell), each setting trained as a seed group of
queued runs; a pruner fed with each epoch's validation accuracy stops bad settings early (shown as pruned).

spec.py says what a sweep is, study.py holds its Optuna study (and the worker's pruning reports), lifecycle.py its
life (create, advance, cancel), results.py what its pages show. `from core.runs import sweeps` gives all four."""
from core.runs.sweeps.lifecycle import advance, advance_all, cancel, create, open_sweeps, sweep_runs
from core.runs.sweeps.results import (MIN_TRIALS_FOR_IMPORTANCE, Setting, SweepInfo, importances, is_done,
                                      list_sweeps, settings, trial_rows)
from core.runs.sweeps.spec import (ASK_AT_ONCE, MAX_SEEDS, MAX_TRIALS, SAMPLERS, SOURCE, SWEEPABLE, Space, SweepSpec,
                                   parse_space)
from core.runs.sweeps.study import TrialReporter, copy_studies

__all__ = ["advance", "advance_all", "cancel", "create", "open_sweeps", "sweep_runs", "Setting", "SweepInfo",
           "is_done", "list_sweeps", "settings", "trial_rows", "ASK_AT_ONCE", "MAX_SEEDS", "MAX_TRIALS", "SAMPLERS",
           "SOURCE", "SWEEPABLE", "Space", "SweepSpec", "parse_space", "MIN_TRIALS_FOR_IMPORTANCE", "TrialReporter",
           "copy_studies", "importances"]
