"""Presentation mode: a lesson on a projector. Large type for text, metrics and chart text, the sidebar folded
away, the live curves at the top of Train, at most two charts per row, toasts at the bottom (at the top they
covered Stop and 📱 Class link for their 4 s). Kept in the link as ?present=1, so the
teacher's link opens in it. Light or dark: Streamlit's own theme switch (⋮ menu › Settings), which
.streamlit/config.toml offers with a light and a dark theme."""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.callback_state import keep
from ui.charts import quick_tick_labels

__all__ = ["PRESENT_PARAM", "presenting", "presentation_switch", "presentation_style", "for_room", "room_fonts",
           "CHART_FONT", "chart_config", "on_phone"]

PRESENT_PARAM = "present"
CHART_FONT = 20        # px of chart text when presenting (Plotly's default is 12)
ROOT_FONT = 21         # px of the page's root font when presenting (Streamlit sizes text in rem; default 16)
_KEY, _URL_SEEN = "present", "_present_url"
PHONE_FONT = 17       # px of the root font when presenting on a narrow screen (a teacher's link on a phone)
ROOM_CSS = f"""<style>
html {{ font-size: {ROOT_FONT}px; }}
@media (max-width: 640px) {{ html {{ font-size: {PHONE_FONT}px; }} }}
[data-testid="stHeader"] {{ height: 2.6rem; min-height: 2.6rem; }}
[data-testid="stMainBlockContainer"] {{ padding-top: 2.8rem; }}
[data-testid="stMetricValue"] {{ font-size: 2.4rem; }}
[data-testid="stMetricValue"] div {{ overflow: visible; text-overflow: clip; }}
[data-testid="stMetricValue"] p {{ font-size: inherit; }}
[data-testid="stMetricLabel"] p {{ font-size: 1.05rem; }}
[data-testid="stCaptionContainer"] {{ font-size: 0.9rem; }}
[data-testid="stWidgetLabel"] p, :not([data-testid="stMetricValue"]) > [data-testid="stMarkdownContainer"] p,
[data-testid="stProgress"] p {{ font-size: 1rem; }}
[data-testid="stToastContainer"] {{ top: auto !important; bottom: 0.5rem; }}
</style>"""


def presenting() -> bool:
    """Whether this session presents. A link's ?present= wins when it is new to the session; the sidebar
    switch changes it; the URL always carries it while on, so a shared link keeps it."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return False
    url = st.query_params.get(PRESENT_PARAM)
    if url is not None and url != st.session_state.get(_URL_SEEN):
        st.session_state[_URL_SEEN] = url
        st.session_state[_KEY] = url in ("1", "true", "yes", "on")
    on = st.session_state.setdefault(_KEY, False)
    if on and st.query_params.get(PRESENT_PARAM) != "1":
        st.query_params[PRESENT_PARAM] = "1"
        st.session_state[_URL_SEEN] = "1"
    elif not on and PRESENT_PARAM in st.query_params:
        del st.query_params[PRESENT_PARAM]
        st.session_state[_URL_SEEN] = None
    return on


def presentation_switch(label: str, help_text: str) -> None:
    """The sidebar's toggle."""
    st.session_state["_present_toggle"] = presenting()
    st.toggle(label, key="_present_toggle", on_change=keep, args=("_present_toggle", _KEY), help=help_text)


def presentation_style() -> None:
    """Large type for a room: the root font (Streamlit's sizes are in rem), metric values that are never cut
    to "95.4…", and wide tables' text."""
    if not presenting():
        return
    st.html(ROOM_CSS)


def on_phone() -> bool:
    """Whether this session's browser says it is a phone (its user agent's "Mobi", as browsers mark phones)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return False
    return "Mobi" in (st.context.headers.get("User-Agent") or "")


def chart_config() -> dict:
    """Plotly's options for a chart: no toolbar in a room or on a phone (there it covers the legend and the top
    of the data, and a lesson has no use for zoom buttons)."""
    return {"displayModeBar": False} if presenting() or on_phone() else {"displaylogo": False}


def room_fonts(fig):
    """Chart text for a room, set on every part: Streamlit's chart theme sets tick, axis-title and legend
    sizes of its own, which a figure-wide font size does not reach."""
    big = dict(size=CHART_FONT)
    fig.update_layout(font=big, hoverlabel=dict(font_size=CHART_FONT), legend=dict(font=big))
    fig.update_xaxes(tickfont=big, title_font=big)
    fig.update_yaxes(tickfont=big, title_font=big)
    fig.update_annotations(font_size=CHART_FONT + 2)
    return fig


def for_room(fig, height: int | None = None):
    """A Plotly figure as the pages show it: tick labels drawn quickly (quick_tick_labels), and text readable
    from the back row when presenting."""
    quick_tick_labels(fig)
    if presenting():
        room_fonts(fig)
        if height:
            fig.update_layout(height=height)
    return fig
