"""The app's pages and the sidebar that links them.

The page scripts live in app_pages/, not pages/: Streamlit treats a folder named pages/ next to the main
script as its older multipage mode and then runs a page script on its own, without app.py's frame, when a
page URL is the first request a fresh server gets. With any other name, st.navigation is the only router,
so every page always runs inside the frame."""
from __future__ import annotations

import streamlit as st

from ui.class_link import class_link_popover
from ui.language import language_switch, t
from ui.present import presentation_switch
from ui.run_picker import reserve_status_slot, sidebar_footer, sidebar_status

__all__ = ["PAGES", "DEFAULT_PAGE", "page_title", "render_sidebar"]

# (file, icon, url path); the title is t("nav.<url path>"). app.py builds st.navigation from this list.
PAGES = [
    ("app_pages/data.py", "🔢", "data"),
    ("app_pages/configure.py", "⚙️", "configure"),
    ("app_pages/train.py", "🏋️", "train"),
    ("app_pages/evaluate.py", "📊", "evaluate"),
    ("app_pages/draw.py", "✏️", "draw"),
    ("app_pages/compare.py", "⚖️", "compare"),
    ("app_pages/sweeps.py", "🔍", "sweeps"),
    ("app_pages/weights.py", "📈", "weights"),
    ("app_pages/runs.py", "🗂️", "runs"),
]
DEFAULT_PAGE = "app_pages/train.py"


def page_title(url: str) -> str:
    return t(f"nav.{url}")


def render_sidebar(page_draws_status: bool = False) -> None:
    """Page links, the active run's status (polled; or a place the page fills: page_draws_status) and the
    language."""
    with st.sidebar:
        st.markdown("### 🧠 " + t("common.app_name"))
        for path, icon, url in PAGES:
            st.page_link(path, label=page_title(url), icon=icon)
        st.divider()
        if page_draws_status:
            reserve_status_slot()
        else:
            sidebar_status()
        sidebar_footer()
        language_switch()
        class_link_popover()
        presentation_switch(t("common.presentation_mode"), t("common.presentation_help"))
