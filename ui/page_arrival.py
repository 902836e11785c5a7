"""Arriving on a page: its top in view, and on a phone the page itself, not the drawer it was chosen in.

Streamlit keeps the scroll position of the page before (Start at the bottom of Configure opened Train scrolled
down, its control bar out of sight) and, on a narrow screen, leaves the sidebar drawer open over the new page
after a tap on one of its links (the first finger-drawn digit then landed on the drawer's shadow). A small
script, sent once per arrival, scrolls to the top and closes the drawer where it covers the page."""
from __future__ import annotations

import streamlit as st

__all__ = ["arrive", "NARROW_PX"]

NARROW_PX = 768  # Streamlit's own breakpoint: below it the sidebar is a drawer over the page
_LAST, _COUNT = "_arrived_at", "_arrivals"
_SCRIPT = """<script>/* arrival {n} */
for (const el of document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppScrollToBottomContainer"]'))
  el.scrollTo(0, 0);
const sidebar = document.querySelector('[data-testid="stSidebar"]');
const close = document.querySelector('[data-testid="stSidebarCollapseButton"]');
if (window.innerWidth < {narrow} && sidebar?.dataset.collapsed === 'false' && close)
  (close.querySelector('button') || close).click();
</script>"""


def arrive(url_path: str) -> None:
    """Call once per page run: on the first run of a page the session was not on, send the script."""
    if st.session_state.get(_LAST) == url_path:
        return
    first = _LAST not in st.session_state
    st.session_state[_LAST] = url_path
    if first:
        return  # a fresh load starts at the top, with the drawer closed
    n = st.session_state[_COUNT] = st.session_state.get(_COUNT, 0) + 1  # a new element each time: it runs again
    st.sidebar.html(_SCRIPT.replace("{n}", str(n)).replace("{narrow}", str(NARROW_PX)),
                    unsafe_allow_javascript=True)
