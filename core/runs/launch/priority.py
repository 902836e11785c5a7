"""Training below the pages: the worker processes the studio starts train at a lower CPU priority than the app
server and the browser beside it.

A run keeps both cores of a small machine busy. At the same priority the page that Start opened waited for its
share of them: the first step, done, reached the page 0.53-0.64 s later (medians; 0.32-0.31 s with the workers
niced, bench/start_latency.py, docs/performance.md), and every live view's poll and Draw waited the same way.
A lower priority gives the cores to the pages only while they ask for them: a run watched live trains as many
steps as before (bench/live_page_cost.py), and a run alone on the machine takes all of it.

STUDIO_TRAINING_NICE: the workers' niceness, 0 (the app's priority) to 19 (the lowest); default 10.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import psutil

__all__ = ["TRAINING_NICE_ENV", "DEFAULT_NICE", "training_nice", "lower_priority"]

TRAINING_NICE_ENV = "STUDIO_TRAINING_NICE"
DEFAULT_NICE = 10

_LOG = logging.getLogger(__name__)


def training_nice() -> int:
    """The niceness for training workers (STUDIO_TRAINING_NICE; a value that is not 0-19 is said in the log and
    the default used)."""
    raw = os.environ.get(TRAINING_NICE_ENV, "").strip()
    if not raw:
        return DEFAULT_NICE
    if raw.isdigit() and int(raw) <= 19:
        return int(raw)
    _LOG.warning("%s=%r is not a niceness from 0 (the app's priority) to 19 (the lowest): training uses %d",
                 TRAINING_NICE_ENV, raw, DEFAULT_NICE)
    return DEFAULT_NICE


def lower_priority(pid: int) -> None:
    """Lower a worker just started in a session of its own (start_new_session) to training_nice(): its session's
    autogroup, where Linux shares the cores between sessions first (there a process's own niceness counts only
    inside its session), and the process itself, where it does not. Popen returns once the child has exec'd,
    before its interpreter has started a thread, so every thread it starts has the process's niceness."""
    nice = training_nice()
    if nice == 0:
        return
    try:
        psutil.Process(pid).nice(nice)
    except psutil.NoSuchProcess:
        return  # it has ended already; its run's outcome says why
    autogroup = Path(f"/proc/{pid}/autogroup")  # Linux with autogroups (CONFIG_SCHED_AUTOGROUP)
    if not autogroup.exists():
        return
    try:
        autogroup.write_text(str(nice))
    except OSError as e:
        _LOG.warning("the training worker %d trains at the app's priority: its session's niceness could not be "
                     "set (%s)", pid, e)
