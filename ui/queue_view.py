"""The run queue where people look for it: the Train and Runs pages (position, who queued it, when it should
start; cancel, move to the front) and a line in the sidebar."""
from __future__ import annotations

import streamlit as st

from core.runs.run_queue import QueuedRun, RunQueue
from core.runs.store import RunStore
from ui.format import fmt_eta
from ui.identity import actions, attempt, current_person
from ui.language import t
from ui.text import literal

__all__ = ["queue_panel", "queue_line", "my_waiting_run", "to_front_button", "clean_up_panel", "when_it_starts"]

# rows drawn with their buttons; the rest are counted (200 queued runs of one person: a page, not 400 buttons)
SHOWN = 12


def _compact(waiting: list[QueuedRun]) -> tuple[list[QueuedRun], dict[str, list[QueuedRun]]]:
    """The queued runs outside sweeps, and each sweep's queued runs (shown as one row: a sweep is cancelled on
    its own page, not run by run)."""
    single: list[QueuedRun] = []
    by_sweep: dict[str, list[QueuedRun]] = {}
    for w in waiting:
        if w.run.sweep:
            by_sweep.setdefault(w.run.sweep, []).append(w)
        else:
            single.append(w)
    return single, by_sweep


def when_it_starts(w: QueuedRun) -> str:
    """ "starts in about 20 s", or, behind a paused run, what it waits for (a pause has no end to estimate)."""
    if w.held_by:
        return t("queue.after_paused", run=literal(w.held_by))
    return t("queue.starts_in", eta=fmt_eta(w.starts_in_s))


def queue_panel(store: RunStore, key: str) -> None:
    """The queued runs in start order, with Cancel and Move to front (nothing when the queue is empty): a row per
    run outside sweeps (at most SHOWN of other people's and 2 × SHOWN in all), a row per sweep."""
    queue = RunQueue(store)
    waiting = queue.waiting()
    if not waiting:
        return
    st.markdown("#### ⏳ " + t("queue.header", n=len(waiting), slots=queue.slots))
    act = actions()
    single, by_sweep = _compact(waiting)
    for runs in by_sweep.values():
        st.markdown(t("queue.sweep_row", position=runs[0].position, n=len(runs),
                      name=literal(runs[0].run.name.split(" #")[0]), who=literal(runs[0].run.submitter or "–"),
                      when=when_it_starts(runs[0])))
    shown = [w for w in single if w.position <= SHOWN or act.person.may("cancel", w.run)][:SHOWN * 2]
    for w in shown:
        row = st.container(horizontal=True, vertical_alignment="center")
        row.markdown(t("queue.row", position=w.position, name=literal(w.run.name),
                       who=literal(w.run.submitter or w.run.source), network=literal(w.run.config.shape_label),
                       epochs=w.run.config.epochs, when=when_it_starts(w)))
        if not act.person.may("cancel", w.run):
            continue
        to_front_button(w, f"{key}_front_{w.run.id}", row)
        if row.button("✖️ " + t("queue.cancel"), key=f"{key}_cancel_{w.run.id}"):
            cancelled = attempt(act.cancel, w.run)
            if cancelled is not None:
                st.toast(t("queue.cancelled", name=w.run.name) if cancelled else t("queue.already_started"))
                st.rerun()
    if len(shown) < len(single):
        st.caption(t("queue.more", n=len(single) - len(shown)))
    st.caption(t("queue.policy"))
    if act.person.admin:
        clean_up_panel(store, waiting, key)


def clean_up_panel(store: RunStore, waiting: list[QueuedRun], key: str) -> None:
    """An admin cancels everything one person has queued (their runs and open sweeps), recorded run by run."""
    people = sorted({w.run.submitter for w in waiting if w.run.submitter})
    if not people:
        return
    with st.expander("🧹 " + t("queue.clean_up")):
        who = st.selectbox(t("queue.clean_up_who"), people, key=f"{key}_clean_who")
        n = sum(w.run.submitter == who for w in waiting)
        if st.button(t("queue.clean_up_button", who=literal(who), n=n), key=f"{key}_clean_up"):
            done = attempt(actions().clean_up, who)
            if done is not None:
                st.toast(t("queue.cleaned_up", who=who, runs=done[0], sweeps=done[1]))
                st.rerun()


def my_waiting_run(store: RunStore, run_id: str | None) -> QueuedRun | None:
    """The run `run_id` (this session's last Start) while it waits in the queue, with its place; without one (a
    reload begins a new session), the first of this person's own runs that wait."""
    person = current_person()
    if person.viewer:  # in by the class link: starts nothing (and a room of phones reads no queue at each poll)
        return None
    waiting = RunQueue(store).waiting()
    mine = next((w for w in waiting if w.run.id == run_id), None)
    if mine is not None:
        return mine
    # a local single-user server's one person has no name, and their runs no submitter: each is theirs
    return next((w for w in waiting if person.owns(w.run) or not person.ident and not w.run.submitter
                 and not w.run.sweep), None)


def to_front_button(w: QueuedRun, key: str, where=st) -> None:
    """Move to front, for whoever may (an admin: the whole queue; the owner: ahead of their own runs)."""
    act = actions()
    if (w.position > 1 and act.person.may("move_to_front", w.run)
            and where.button("⏫ " + t("queue.to_front"), key=key)
            and attempt(act.move_to_front, w.run) is not None):
        st.rerun()


def queue_line(store: RunStore) -> None:
    """The sidebar's line: how many wait, and the next one."""
    waiting = RunQueue(store).waiting()
    if waiting:
        st.caption("⏳ " + t("queue.sidebar", n=len(waiting), name=literal(waiting[0].run.name),
                             when=when_it_starts(waiting[0])))
