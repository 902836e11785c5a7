"""The Train page that opens after Start waits, briefly, for the run's first step, so that it draws it.

Start opens Train at once, while the worker takes the run and (on a warm worker's prepared model) trains its
first step a few tenths of a second later; drawn before that, the page showed the step only at its live view's
next poll, up to a second later (bench/start_latency.py). So the page that this session's Start opened holds
its first drawing until the first step is in the store, at most FIRST_STEP_WAIT_S: a run waiting in the queue,
started paused or started elsewhere is drawn at once.
"""
from __future__ import annotations

import time

import streamlit as st

from core.runs.rows import Request, Run, Status
from core.runs.store import RunStore

__all__ = ["FIRST_STEP_WAIT_S", "await_first_step"]

FIRST_STEP_WAIT_S = 1.5
_CHECK_EVERY_S = 0.05


def await_first_step(store: RunStore, run: Run) -> Run:
    """run as the store has it once its first step is in (or the wait is over); only on the page this
    session's Start opened, once."""
    if st.session_state.pop("_await_first_step", None) != run.id:
        return run
    deadline = time.monotonic() + FIRST_STEP_WAIT_S
    while _coming(run) and time.monotonic() < deadline:
        time.sleep(_CHECK_EVERY_S)
        run = store.get(run.id) or run
    return run


def _coming(run: Run) -> bool:
    return run.step == 0 and run.status in (Status.STARTING, Status.RUNNING) and run.request != Request.PAUSE
