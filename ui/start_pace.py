"""How the next run starts: at full speed, paused before its first step, or in slow motion from it. Chosen beside
Start and kept in the link (?start=paused&delay=0.5), so a teacher's prepared link starts the lesson's run the
way the lesson needs; a 3-epoch MLP at full speed is over before the class's phones show it."""
from __future__ import annotations

import streamlit as st

from core.runs.rows import StartPace
from ui.callback_state import keep
from ui.language import t
from ui.pacing import DELAYS, delay_label

__all__ = ["START_PARAM", "DELAY_PARAM", "start_pace_picker", "chosen_pace", "pace_link_errors"]

START_PARAM, DELAY_PARAM = "start", "delay"
# The choice lives in keys of its own: a widget's state is dropped on a page where it is not drawn, and the
# choice goes with the session from Train to Configure and back.
_PAUSED, _DELAY, _SEEN = "_start_paused", "_start_delay", "_start_pace_url"


def _from_link() -> None:
    """A link's start= and delay= set the picker when they are new to this session (later changes on the page
    win); a value that is not one is said once (pace_link_errors)."""
    given = (st.query_params.get(START_PARAM), st.query_params.get(DELAY_PARAM))
    if given == st.session_state.get(_SEEN):
        return
    st.session_state[_SEEN] = given
    errors = {}
    start, delay = given
    if start is not None:
        if start in ("paused", "running"):
            st.session_state[_PAUSED] = start == "paused"
        else:
            errors[START_PARAM] = t("train.start_param_bad", value=start)
    if delay is not None:
        try:
            seconds = float(delay)
        except ValueError:
            seconds = -1.0
        if 0 <= seconds <= DELAYS[-1]:
            st.session_state[_DELAY] = min(DELAYS, key=lambda d: abs(d - seconds))
        else:
            errors[DELAY_PARAM] = t("train.delay_param_bad", value=delay, most=f"{DELAYS[-1]:g}")
    st.session_state["_start_pace_errors"] = errors


def pace_link_errors() -> dict[str, str]:
    """What of the link's start= and delay= was not applied, and why."""
    _from_link()
    return st.session_state.get("_start_pace_errors", {})


def chosen_pace() -> StartPace:
    _from_link()
    return StartPace(bool(st.session_state.get(_PAUSED, False)), float(st.session_state.get(_DELAY, 0.0)))


def _to_link(pace: StartPace) -> None:
    """The link says the choice while it is not full speed, so the teacher's link keeps it."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in (START_PARAM, DELAY_PARAM)}
    if pace.paused:
        params[START_PARAM] = "paused"
    if pace.step_delay:
        params[DELAY_PARAM] = f"{pace.step_delay:g}"
    if params != st.query_params.to_dict():
        st.query_params.from_dict(params)
    st.session_state[_SEEN] = (params.get(START_PARAM), params.get(DELAY_PARAM))


def start_pace_picker(key: str) -> StartPace:
    """Start paused, and slow motion from the first step: a row beside Start; the link follows the choice."""
    pace = chosen_pace()
    _to_link(pace)
    row = st.container(horizontal=True, vertical_alignment="center", key=f"pace_{key}")
    row.toggle("⏸️ " + t("train.start_paused"), value=pace.paused, key="start_paused", on_change=keep,
               args=("start_paused", _PAUSED), help=t("train.start_paused_help"))
    with row.container(width=320):
        st.select_slider(t("train.start_slow"), options=DELAYS, value=pace.step_delay, key="start_delay",
                         format_func=delay_label, on_change=keep, args=("start_delay", _DELAY),
                         help=t("train.slow_motion_help"))
    return pace
