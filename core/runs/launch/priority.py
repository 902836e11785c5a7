"""Training below the pages, where a deployment asks for it: the worker processes the studio starts can train at
a lower CPU priority than the app server and the browser beside it (STUDIO_TRAINING_NICE, 0 to 19; default 0,
the app's priority).

A run keeps both cores of a small machine busy, and at the same priority the page that Start opened waits for its
share of them: with the workers at niceness 10, the first step, done, reached the page in 0.42 and 0.37 s against
0.59 and 0.46 s (medians, LeNet-5 and the MLP; Start → first live step 0.80 s against 0.91 s for LeNet-5, the
same 0.98 s for the MLP: bench/start_latency.py, docs/performance.md). It is not the default: a niced worker gets
a tenth of a core's share against each busy process at the normal priority, and on a loaded machine (the test
suite's browser phase) a run in slow motion took no step in 3 s. A run must not stall because something else is
busy; a teacher's laptop that runs nothing else can ask for the quicker page.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import psutil

__all__ = ["TRAINING_NICE_ENV", "DEFAULT_NICE", "training_nice", "lower_priority"]

TRAINING_NICE_ENV = "STUDIO_TRAINING_NICE"
DEFAULT_NICE = 0

_LOG = logging.getLogger(__name__)


def training_nice() -> int:
    """The niceness for training workers (STUDIO_TRAINING_NICE; a value that is not 0-19 is said in the log and
    the default, 0, used)."""
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
