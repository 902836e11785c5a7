"""A lesson's pace on the Train page: Pause/Resume and Stop, Step (n steps, then pause), slow motion (a delay
before every step, changed while it runs) and a new learning rate from the next step, as TensorFlow
Playground lets you change it while it trains. Everything goes through the run store, so every viewer sees it."""
from __future__ import annotations

import streamlit as st

from core.config import ConfigError, parse_field
from core.runs.rows import RequestNotice, Run
from core.runs.store import MAX_STEP_REQUEST, RunStore
from core.training.control import MAX_STEP_DELAY_S
from ui.i18n import language, status_word, t
from ui.people import actions, attempt, owner_label
from ui.text import literal

__all__ = ["controls", "pacing", "notice_text", "DELAYS"]

DELAYS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, MAX_STEP_DELAY_S)  # seconds before every step


def notice_text(notice: RequestNotice) -> str:
    """What became of a request, in the user's language."""
    return t(f"train.notice_{notice.code}", what=t(f"train.what_{notice.what}"), name=literal(notice.name),
             status=status_word(notice.status) if notice.status else "")


def _say(notice: RequestNotice | None) -> None:
    if notice is not None:
        st.toast(notice_text(notice))


def controls(store: RunStore, run: Run) -> None:
    """Pause or Resume, and Stop: for the run's owner and admins (others see who may)."""
    act = actions()
    if not act.person.may("pause", run):
        st.caption(t("train.controls_owner", owner=literal(owner_label(run))))
        return
    row = st.container(horizontal=True)  # buttons as wide as their words, at any zoom
    if run.status == "paused":
        if row.button("▶️ " + t("train.resume"), key="resume"):
            _say(attempt(act.resume, run))
    elif row.button("⏸️ " + t("train.pause"), key="pause", disabled=run.status != "running"):
        _say(attempt(act.pause, run))
    if row.button("⏹️ " + t("train.stop"), key="stop"):
        _say(attempt(act.stop, run))


def _set_delay(run: Run, key: str, current: float) -> None:
    if st.session_state[key] == current:
        return  # nothing changed (a widget drawn anew)
    # Said by the fragment's body, not here: a toast from a callback of a fragment's widget wiped the page's
    # other elements drawn outside the fragment (the presentation style with them; Streamlit 1.67).
    st.session_state["_pacing_notice"] = actions().delay(run, st.session_state[key])


def _delay_label(seconds: float) -> str:
    return t("train.full_speed") if seconds == 0 else f"{seconds:g} s"


def pacing(store: RunStore, run: Run, current_lr: float) -> None:
    """Step, slow motion and the learning rate of an active run (for its owner and admins)."""
    if not actions().person.may("step", run):
        return
    notice = st.session_state.pop("_pacing_notice", None)
    if notice is not None:
        st.toast(notice_text(notice))
    with st.container(border=True):
        step, delay, rate = st.columns([2, 3, 3])
        # The rate first: an Apply and a Step clicked in quick succession reach one run of the page (Streamlit
        # keeps both clicks), and the new rate must be requested before the steps it applies to.
        with rate:
            _learning_rate(store, run, current_lr)
        with step:
            n = st.number_input(t("train.step_n"), min_value=1, max_value=MAX_STEP_REQUEST, value=10, step=1,
                                key="step_n", help=t("train.step_help"))
            if st.button("⏭️ " + t("train.step_button", n=int(n)), key="step", disabled=run.config.workers > 1):
                _say(attempt(actions().step, run, int(n)))
        with delay:
            key = f"delay_{run.id}"
            nearest = min(DELAYS, key=lambda d: abs(d - (run.step_delay or 0.0)))
            value = {} if key in st.session_state else {"value": nearest}
            st.select_slider(t("train.slow_motion"), options=DELAYS, key=key, format_func=_delay_label,
                             on_change=_set_delay, args=(run, key, run.step_delay or 0.0),
                             help=t("train.slow_motion_help"), **value)
        if run.config.workers > 1:
            st.caption(t("train.pacing_parallel"))


def _learning_rate(store: RunStore, run: Run, current_lr: float) -> None:
    raw = st.text_input(t("train.learning_rate_next"), value=f"{current_lr:g}",
                        key=f"lr_{run.id}", disabled=run.config.workers > 1, help=t("train.learning_rate_help"))
    if st.button("✔️ " + t("train.apply_lr"), key="apply_lr", disabled=run.config.workers > 1):
        try:
            value = parse_field("learning_rate", raw, language())
        except ConfigError as e:
            st.error(e.errors["learning_rate"])
            return
        _say(attempt(actions().learning_rate, run, value))
