"""A lesson's pace on the Train page: Pause/Resume and Stop, Step (n steps, then pause), slow motion (a delay
before every step, changed while it runs) and the optimizer's live settings from the next step (ui/live_knobs.py),
as TensorFlow Playground lets you change them while it trains. Everything goes through the run store, so every
viewer sees it."""
from __future__ import annotations

import streamlit as st

from core.live_settings import MAX_STEP_DELAY_S, MAX_STEP_REQUEST
from core.runs.rows import RequestNotice, Run
from ui.callback_state import still_drawn
from ui.language import status_word, t
from ui.identity import actions, attempt, owner_label
from ui.live_knobs import ask_typed, knob_inputs
from ui.text import literal

__all__ = ["controls", "pacing", "notice_text", "DELAYS", "delay_label", "set_delay", "say_kept", "on_apply",
           "on_step", "toast_notice"]

DELAYS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, MAX_STEP_DELAY_S)  # seconds before every step


def notice_text(notice: RequestNotice) -> str:
    """What became of a request, in the user's language."""
    return t(f"train.notice_{notice.code}", what=t(f"train.what_{notice.what}"), name=literal(notice.name),
             status=status_word(notice.status) if notice.status else "")


def toast_notice(notice: RequestNotice | None) -> None:
    if notice is not None:
        st.toast(notice_text(notice))


def controls(run: Run) -> None:
    """Pause or Resume, and Stop: for the run's owner and admins (others see who may)."""
    act = actions()
    if not act.person.may("pause", run):
        st.caption(t("train.controls_owner", owner=literal(owner_label(run))))
        return
    row = st.container(horizontal=True)  # buttons as wide as their words, at any zoom
    if run.status == "paused":
        if row.button("▶️ " + t("train.resume"), key="resume"):
            toast_notice(attempt(act.resume, run))
    elif row.button("⏸️ " + t("train.pause"), key="pause", disabled=run.status != "running"):
        toast_notice(attempt(act.pause, run))
    if row.button("⏹️ " + t("train.stop"), key="stop"):
        toast_notice(attempt(act.stop, run))


def set_delay(run: Run, key: str, current: float) -> None:
    if not still_drawn(key) or st.session_state[key] == current:
        return  # nothing changed (a widget drawn anew, or no longer drawn)
    # Said by the page's body, not here: a toast from a widget's callback wiped the page's other elements
    # drawn outside the fragment (the presentation style with them; Streamlit 1.67).
    _later(attempt(actions().ask, run, "step_delay", st.session_state[key], show=_keep_refusal))


def _later(notice: RequestNotice | None) -> None:
    """Keep what became of a request for the page's body to say (callbacks draw nothing). The latest of each
    kind: three notches of slow motion whose page runs preempted one another would say the same thing thrice."""
    if notice is not None:
        notices = st.session_state.setdefault("_pacing_notices", {})
        notices.pop(notice.what, None)
        notices[notice.what] = notice


def _keep_refusal(message: str) -> None:
    """Where a callback's refusal waits for the body to show it (drawn by a callback, it lands atop the page)."""
    st.session_state["_pacing_refusal"] = message


def delay_label(seconds: float) -> str:
    return t("train.full_speed") if seconds == 0 else f"{seconds:g} s"


def pacing(run: Run, values: dict[str, float]) -> None:
    """Step, slow motion and the optimizer's live settings of an active run (for its owner and admins)."""
    if not actions().person.may("step", run):
        return
    say_kept()
    with st.container(border=True):
        step, delay, rate = st.columns([2, 3, 3])
        with step:
            n = st.number_input(t("train.step_n"), min_value=1, max_value=MAX_STEP_REQUEST, value=10, step=1,
                                key="step_n", help=t("train.step_help"))
            st.button("⏭️ " + t("train.step_button", n=int(n)), key="step", disabled=run.config.workers > 1,
                      on_click=on_step, args=(run, values))
        with delay:
            key = f"delay_{run.id}"
            nearest = min(DELAYS, key=lambda d: abs(d - (run.step_delay or 0.0)))
            st.select_slider(t("train.slow_motion"), options=DELAYS, key=key, format_func=delay_label,
                             on_change=set_delay, args=(run, key, run.step_delay or 0.0), value=nearest,
                             help=t("train.slow_motion_help"))
        with rate:
            knob_inputs(run, values, on_apply, disabled=run.config.workers > 1)
        if run.config.workers > 1:
            st.caption(t("train.pacing_parallel"))


def say_kept() -> None:
    for notice in st.session_state.pop("_pacing_notices", {}).values():
        st.toast(notice_text(notice))
    if "_pacing_refusal" in st.session_state:
        st.error(st.session_state.pop("_pacing_refusal"))


# Step and Apply act in their buttons' callbacks, which Streamlit runs first thing in the page run a click
# starts: a second click preempts the page run the first one started, so a click acted on in the page's body
# can be lost. When both clicks reach one run (both callbacks in it), Step's asks for the settings first: they
# are for the steps that follow them.
def on_apply(run: Run, values: dict[str, float]) -> None:
    if not st.session_state.get("step"):  # else Step's callback asks for the settings, then the steps
        ask_typed(run, values, _later, _keep_refusal)


def on_step(run: Run, values: dict[str, float] | None = None) -> None:
    if values is not None and st.session_state.get("apply_lr") and not ask_typed(run, values, _later, _keep_refusal):
        return  # the steps were meant for the new settings: none until they are numbers
    _later(attempt(actions().ask, run, "step", int(st.session_state["step_n"]), show=_keep_refusal))
