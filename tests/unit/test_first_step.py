"""The Train page that this session's Start opened waits for the run's first step, briefly, and draws it
(ui/first_step.py); any other page of Train draws at once."""
from __future__ import annotations

import threading
import time

import pytest
import streamlit as st

from core.config import TrainConfig
from core.runs.rows import Request, Status
from ui.first_step import FIRST_STEP_WAIT_S, await_first_step

# Each test times a wait or a thread against a clock (pytest.ini's `deadline`): ./test.sh runs them in phase 1.
pytestmark = pytest.mark.deadline


def running_run(store, **fields) -> str:
    run_id = store.create_run(TrainConfig(), exclusive=False)
    store.update(run_id, status=Status.RUNNING, **fields)
    return run_id


def first_step_in(store, run_id: str, after_s: float) -> threading.Thread:
    def add():
        time.sleep(after_s)
        store.add_steps(run_id, [(1, 1, 2.3, after_s)], step=1, epoch=1)
    thread = threading.Thread(target=add)
    thread.start()
    return thread


def test_the_page_start_opened_draws_the_first_step_that_comes_while_it_waits(store):
    run_id = running_run(store)
    st.session_state["_await_first_step"] = run_id
    thread = first_step_in(store, run_id, 0.4)
    started = time.monotonic()
    run = await_first_step(store, store.get(run_id))
    waited = time.monotonic() - started
    thread.join()
    assert run.step == 1 and 0.35 < waited < FIRST_STEP_WAIT_S
    assert "_await_first_step" not in st.session_state, "once: the next drawing of the page waits for nothing"


def test_no_wait_for_a_run_started_paused_or_one_this_session_did_not_start(store):
    paused = running_run(store, request=Request.PAUSE)
    other = running_run(store)
    for run_id, awaited in ((paused, paused), (other, "another run")):
        st.session_state["_await_first_step"] = awaited
        started = time.monotonic()
        assert await_first_step(store, store.get(run_id)).step == 0
        assert time.monotonic() - started < 0.2


def test_the_wait_ends_after_its_limit_when_no_step_comes(store):
    run_id = running_run(store)
    st.session_state["_await_first_step"] = run_id
    started = time.monotonic()
    assert await_first_step(store, store.get(run_id)).step == 0
    assert FIRST_STEP_WAIT_S <= time.monotonic() - started < FIRST_STEP_WAIT_S + 0.5


class _Queue:
    """A browser queue that the event loop empties after `checks` looks."""

    def __init__(self, checks: int):
        self.checks = checks

    def is_empty(self) -> bool:
        self.checks -= 1
        return self.checks < 0


def test_the_drawing_that_waited_lets_its_step_go_out_before_the_page_goes_on(store, monkeypatch):
    import ui.first_step as first_step
    queue = _Queue(checks=5)
    monkeypatch.setattr(first_step, "_browser_queue", lambda: queue)
    said = []
    monkeypatch.setattr(first_step._LOG, "info", lambda *args: said.append(args[0] % args[1:]))
    run_id = running_run(store)
    store.add_steps(run_id, [(1, 1, 2.3, 0.1)], step=1, epoch=1)
    st.session_state["_await_first_step"] = run_id
    run = await_first_step(store, store.get(run_id))
    first_step.send_first_step(run)
    assert queue.checks == -1, "it looked until the queue was empty"
    assert len(said) == 1 and said[0].startswith(f"{first_step.FIRST_STEP_SENT} {run_id} at "), said
    queue.checks = 5
    first_step.send_first_step(run)  # the live view's next drawing: nothing to wait for
    assert queue.checks == 5 and len(said) == 1


def test_the_wait_to_send_has_a_limit(store, monkeypatch):
    import ui.first_step as first_step
    monkeypatch.setattr(first_step, "_browser_queue", lambda: _Queue(checks=10**9))
    st.session_state["_send_first_step"] = True
    started = time.monotonic()
    first_step.send_first_step(store.get(running_run(store)))
    assert first_step.SEND_WAIT_S <= time.monotonic() - started < first_step.SEND_WAIT_S + 0.2


def test_streamlit_still_keeps_the_browser_queue_that_the_wait_looks_at():
    """ui/first_step.py reads AppSession._browser_queue (Streamlit 1.67): this fails when an upgrade renames it."""
    import inspect

    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
    assert "self._browser_queue = ForwardMsgQueue()" in inspect.getsource(AppSession.__init__)
    assert callable(ForwardMsgQueue.is_empty)
