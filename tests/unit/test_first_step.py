"""The Train page that this session's Start opened waits for the run's first step, briefly, and draws it
(ui/first_step.py); any other page of Train draws at once."""
from __future__ import annotations

import threading
import time

import streamlit as st

from core.config import TrainConfig
from core.runs.rows import Request, Status
from ui.first_step import FIRST_STEP_WAIT_S, await_first_step


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
