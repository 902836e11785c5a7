"""Choosing a run, and the sidebar's glance at the active one."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.runs.rows import ACTIVE, Run
from core.runs.store import RunStore
from ui.format import STATUS_ICONS, fmt_eta, run_choices
from ui.identity import current_person
from ui.language import status_word, t
from ui.live import IDLE_POLL_S, SIDEBAR_POLL_S, active_snapshot, run_snapshot
from ui.queue_view import queue_line
from ui.session import get_store
from ui.store_down import outage_safe
from ui.text import code, literal

__all__ = ["pick_trained_run", "sidebar_status", "draw_status", "sidebar_footer", "reserve_status_slot",
           "status_slot"]

_STATUS_SLOT = "_sidebar_status_slot"  # session state: the container reserved in this page run's sidebar


def pick_trained_run(label: str, key: str) -> tuple[Run, str]:
    """A selectbox of runs that have a checkpoint, training ones included (their newest epoch's: a class draws
    for the teacher's run while it trains): the run chosen and its checkpoint's path on this host (fetched from a
    team's database when it was trained elsewhere; its recorded path when the file is gone, so that the page says
    so). Stops the page with a hint when there is none."""
    runs = [r for r in get_store().list_runs() if r.checkpoint and (r.status not in ACTIVE or r.checkpoint_epoch)]
    chosen_before = st.session_state.get(f"_{key}_chosen")  # (id, name) of this session's last choice
    if chosen_before and chosen_before[0] not in {r.id for r in runs}:
        st.warning(t("common.run_gone", name=literal(chosen_before[1])))  # deleted elsewhere: say so, once
        st.session_state.pop(f"_{key}_chosen")
    if not runs:
        st.info(t("common.no_trained_model_viewer" if current_person().viewer else "common.no_trained_model"))
        st.stop()
    wanted = st.session_state.pop(f"_{key}_wanted", None)  # choose_next: a page asked for this run
    index = next((i for i, r in enumerate(runs) if r.id == wanted), None)
    if index is not None:
        st.session_state.pop(key, None)  # the widget's remembered choice gives way to the one asked for
    labels = run_choices(runs)
    run = st.selectbox(label, runs, index=index or 0, format_func=lambda r: labels[r.id], key=key)
    st.session_state[f"_{key}_chosen"] = (run.id, run.name)
    if run.active:
        st.caption(t("common.training_checkpoint", epoch=run.checkpoint_epoch))
    checkpoint = with_local_checkpoint(get_store(), run).checkpoint
    assert checkpoint is not None, "the list holds runs with a checkpoint only"
    return run, checkpoint


def with_local_checkpoint(store: RunStore, run: Run) -> Run:
    """The run with its checkpoint as a file on this host (fetched from a team's database when it was trained
    elsewhere); its recorded path when the file is gone, so that the page says so."""
    return replace(run, checkpoint=store.checkpoint_file(run) or run.checkpoint)


def choose_next(key: str, run_id: str) -> None:
    """Have pick_trained_run(key=key) choose this run at the page's next run."""
    st.session_state[f"_{key}_wanted"] = run_id



def sidebar_status() -> None:
    """The active run's status, polled every SIDEBAR_POLL_S while one trains and every IDLE_POLL_S while none
    does. When a run starts or ends (here, in another session or from the command line) the whole page is drawn
    again around it. (On the Train page its live view draws this status itself, see status_slot.)"""
    st.session_state.pop(_STATUS_SLOT, None)  # the status is drawn here: no live view draws it in this page run
    store = get_store()
    active = store.active_run()
    active_id = active.id if active else None

    @st.fragment(run_every=SIDEBAR_POLL_S if active else IDLE_POLL_S)
    @outage_safe
    def status():
        now = active_snapshot(store)
        if (now.id if now else None) != active_id:  # the shared read may be older than this page's: ask again
            now = store.active_run()
            if (now.id if now else None) != active_id:
                st.rerun()  # a run started or ended: the page (the Train page's view above all) follows it
        draw_status(run_snapshot(store, now.id) or now if now else None)

    status()


def draw_status(run: Run | None) -> None:
    """The sidebar's status line of the active run (None: no run is training)."""
    if run is None:
        st.caption(t("common.no_run_training"))
        return
    st.markdown(f"**{STATUS_ICONS.get(run.status, '')} {literal(run.name)}**")
    frac = run.step / run.total_steps if run.total_steps else 0.0
    st.progress(min(frac, 1.0), text=t("common.sidebar_progress", status=status_word(run.status),
                                       epoch=run.epoch, epochs=run.config.epochs, eta=fmt_eta(run.eta)))


def sidebar_footer() -> None:
    """Under the status: the queue's line and, for members, where the run store is (a viewer sees no server path)."""
    store = get_store()
    queue_line(store)
    if not current_person().viewer:
        st.caption(t("common.run_store", path=code(store.root)))


def reserve_status_slot() -> None:
    """In the sidebar, where the status goes: left for the page to fill (the Train page's live view draws the
    status in its own poll, so that one poll per viewer does both; a second poll for the sidebar doubled the
    server's work with 60 viewers, bench/load_test.py)."""
    st.session_state[_STATUS_SLOT] = st.container()


def status_slot():
    """The sidebar's status place of this page run (the sidebar itself when none was reserved)."""
    return st.session_state.get(_STATUS_SLOT) or st.sidebar
