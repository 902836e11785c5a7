"""The lesson's control bar, atop Train in presentation mode: the run's name and state, then Pause/Resume,
Step ×n, slow motion, the optimizer's knobs and Stop in one row, so the live curves below it share the room's first
screen (853×480 CSS px: a 1280×720 projector at 150 %). Slow motion and the rate open from their buttons; the
same requests as the pacing box (ui/pacing.py) go through the run store."""
from __future__ import annotations

import streamlit as st

from core.runs.rows import Run
from core.live_settings import LEARNING_RATE, MAX_STEP_REQUEST
from core.runs.store import RunStore
from ui.class_link import class_link_popover
from ui.format import STATUS_ICONS
from ui.identity import actions, attempt, owner_label
from ui.language import status_word, t
from ui.live_knobs import knob_inputs
from ui.pacing import DELAYS, delay_label, on_apply, on_step, say_kept, set_delay, toast_notice
from ui.queue_view import my_waiting_run, to_front_button, when_it_starts
from ui.text import literal

__all__ = ["lesson_bar", "my_queued_line", "rate_label"]


def lesson_bar(store: RunStore, run: Run, values: dict[str, float], held: dict[str, float]) -> None:
    """Name and state, the run's controls for its owner (a line saying who may, for others), and this session's
    own run when it waits in the queue. values, held: the knobs' values now and as people set them
    (ui/live_knobs.py)."""
    title = st.container(horizontal=True, vertical_alignment="center", key="lesson_title")
    title.markdown(f"#### {STATUS_ICONS.get(run.status, '')} {literal(run.name)} — {status_word(run.status)}")
    title.space("stretch")
    if actions().person.may("class_round"):  # the class round lives on Draw, opened in presentation mode
        title.page_link("app_pages/draw.py", label="🧑‍🏫", query_params={"present": "1"},
                        help=t("class.from_train"))
    class_link_popover(title, key="class_qr_lesson")
    _to_front(store, run)
    if not run.active:
        return
    if run.imported:
        return  # followed from its files: nothing here reaches it
    if run.external or not actions().person.may("pause", run):
        st.caption(t("train.controls_owner", owner=literal(owner_label(run))))
        return
    say_kept()
    if title.button("⏹️ " + t("train.stop"), key="stop"):  # apart from the others: not pressed by mistake
        toast_notice(attempt(actions().stop, run))
    bar = st.container(horizontal=True, vertical_alignment="bottom", gap="small", key="lesson_bar")
    _pause_or_resume(bar, run)
    if run.config.workers == 1:
        _step(bar, run, values)
    _slow_motion(bar, run)
    if run.config.workers == 1 and values:
        _knobs(bar, run, values, held)


def _pause_or_resume(bar, run: Run) -> None:
    if run.status == "paused":
        if bar.button("▶️ " + t("train.resume"), key="resume", type="primary"):
            toast_notice(attempt(actions().resume, run))
    elif bar.button("⏸️ " + t("train.pause"), key="pause", disabled=run.status != "running"):
        toast_notice(attempt(actions().pause, run))


def _step(bar, run: Run, values: dict[str, float]) -> None:
    n = int(st.session_state.get("step_n", 10))
    bar.button("⏭️ " + t("train.step_button", n=n), key="step", on_click=on_step, args=(run, values),
               help=t("train.step_help"))
    with bar.container(width=80):
        st.number_input(t("train.step_n"), min_value=1, max_value=MAX_STEP_REQUEST, value=10, step=1,
                        key="step_n", label_visibility="collapsed")


def _slow_motion(bar, run: Run) -> None:
    key = f"delay_{run.id}"
    with bar.popover("🐢 " + delay_label(run.step_delay or 0.0), help=t("train.slow_motion_help")):
        # value=, never a value put in the session state: a slider in a popover not yet opened reported the
        # widget's default with the next click of another button, and that was taken for a choice
        nearest = min(DELAYS, key=lambda d: abs(d - (run.step_delay or 0.0)))
        st.select_slider(t("train.slow_motion"), options=DELAYS, key=key, format_func=delay_label,
                         on_change=set_delay, args=(run, key, run.step_delay or 0.0), value=nearest)


def _knobs(bar, run: Run, values: dict[str, float], held: dict[str, float]) -> None:
    """The optimizer's knobs, opened from a button that shows the learning rate."""
    with bar.popover(rate_label(values, held), help=t("train.learning_rate_help")):
        knob_inputs(run, values, on_apply, row=True)


def rate_label(values: dict[str, float], held: dict[str, float]) -> str:
    """The knobs' button: the rate as set, or, while its schedule moves it at every step, that it does. The bar is
    drawn again only when a held value changes; a number drawn once would go stale (the progress line shows the
    rate at every poll)."""
    if LEARNING_RATE not in held:
        return "📈 " + t("train.rate_button_scheduled")
    return "📈 " + t("train.rate_button", lr=f"{values[LEARNING_RATE]:g}")


def _to_front(store: RunStore, shown: Run) -> None:
    """Move to front for this session's run when others wait ahead of it (its place and wait are said below, by
    my_queued_line, which the live view draws again at every poll)."""
    mine = my_waiting_run(store, st.session_state.get("started_run_id"))
    if mine is not None and mine.run.id != shown.id:
        to_front_button(mine, "lesson_front")


def my_queued_line(store: RunStore, shown: Run) -> None:
    """This session's run (or, after a reload, this person's), when it waits behind the one on screen: said where
    the teacher looks, drawn at every poll so that its place and wait stay true."""
    mine = my_waiting_run(store, st.session_state.get("started_run_id"))
    if mine is not None and mine.run.id != shown.id:
        st.info("⏳ " + t("queue.mine_waiting", name=literal(mine.run.name), position=mine.position,
                         when=when_it_starts(mine)))
