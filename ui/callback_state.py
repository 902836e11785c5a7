"""What a widget's on_change callback may read."""
from __future__ import annotations

import streamlit as st

__all__ = ["still_drawn", "keep"]


def still_drawn(key: str) -> bool:
    """Whether the widget whose callback runs is in the session. Streamlit can run the callback of a widget that
    the page's last run no longer drew: a click on Train's Start right after coming from Configure (both draw the
    start-paused toggle) found no "start_paused" in the session, and the KeyError lost the click's own action
    (tests/browser/test_browser_actions.py in CI). Such a callback has no new value to act on."""
    return key in st.session_state


def keep(widget: str, kept: str) -> None:
    """An on_change callback: the widget's new value into the session key that outlives the widget (Streamlit
    drops a widget's own key on a page that does not draw it)."""
    if still_drawn(widget):
        st.session_state[kept] = st.session_state[widget]
