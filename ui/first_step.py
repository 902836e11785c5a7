"""The Train page that opens after Start waits, briefly, for the run's first step, so that it draws it, and
sends that step to the browser before it builds the rest of the page.

Start opens Train at once, while the worker takes the run and (on a warm worker's prepared model) trains its
first step a few tenths of a second later; drawn before that, the page showed the step only at its live view's
next poll, up to a second later (bench/start_latency.py). So the page that this session's Start opened holds
its first drawing until the first step is in the store, at most FIRST_STEP_WAIT_S: a run waiting in the queue,
started paused or started elsewhere is drawn at once.

Then the progress line goes out before the curves are built. Streamlit's event-loop thread sends what a page
run has drawn, and it needs the interpreter lock to do so: while the page's thread went on building the
curves (0.3-1.0 s with the training on both cores), the progress line, already drawn, reached the browser
0.1-0.4 s late (server traces of bench/start_latency.py: docs/performance.md). `send_first_step` lets the page's
thread sleep until this session's queue is empty, at most SEND_WAIT_S, on that drawing only.
"""
from __future__ import annotations

import time

import streamlit as st
from streamlit.logger import get_logger
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.runs.rows import Request, Run, Status
from core.runs.store import RunStore

__all__ = ["FIRST_STEP_SENT", "FIRST_STEP_WAIT_S", "SEND_WAIT_S", "await_first_step", "send_first_step"]

FIRST_STEP_WAIT_S = 1.5
SEND_WAIT_S = 0.2
_CHECK_EVERY_S = 0.05
_SEND_CHECK_EVERY_S = 0.002
FIRST_STEP_SENT = "first step sent to the browser: run"  # the server's log line (bench/start_latency.py)
_SENDING = "_send_first_step"  # set by await_first_step on the drawing that waited, taken by send_first_step

_LOG = get_logger(__name__)


def await_first_step(store: RunStore, run: Run) -> Run:
    """run as the store has it once its first step is in (or the wait is over); only on the page this
    session's Start opened, once."""
    if st.session_state.pop("_await_first_step", None) != run.id:
        return run
    deadline = time.monotonic() + FIRST_STEP_WAIT_S
    while _coming(run) and time.monotonic() < deadline:
        time.sleep(_CHECK_EVERY_S)
        run = store.get(run.id) or run
    st.session_state[_SENDING] = True
    return run


def send_first_step(run: Run) -> None:
    """On the drawing that awaited the first step: let what the page has drawn so far reach the browser now
    (at most SEND_WAIT_S), before the page goes on, and say in the server's log when it was handed to the
    browser's connection (bench/start_latency.py reads it: the server's own part of a Start). Elsewhere, nothing."""
    if not st.session_state.pop(_SENDING, False):
        return
    queue = _browser_queue()
    deadline = time.monotonic() + SEND_WAIT_S
    while queue is not None and not queue.is_empty() and time.monotonic() < deadline:
        time.sleep(_SEND_CHECK_EVERY_S)  # releases the interpreter lock: the event loop sends
    if run.step >= 1 and queue is not None:
        _LOG.info("%s %s at %.3f", FIRST_STEP_SENT, run.id, time.time())


def _browser_queue():
    """This session's queue of messages for the browser (Streamlit 1.67's AppSession keeps it as
    `_browser_queue`; requirements.txt pins the version): None without a server (AppTest), and None, said in
    the server's log, where this Streamlit has none."""
    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return None
    queue = getattr(Runtime.instance().get_app_session(ctx.session_id), "_browser_queue", None)
    if queue is None or not hasattr(queue, "is_empty"):
        _LOG.warning("the first step goes out with the rest of the page: this Streamlit's session has no "
                     "browser queue to wait on (ui/first_step.py)")
        return None
    return queue


def _coming(run: Run) -> bool:
    return run.step == 0 and run.status in (Status.STARTING, Status.RUNNING) and run.request != Request.PAUSE
