"""MindSpore Training Studio: the frame (navigation, page config, sidebar with the active run)."""
from core.runtime import prepare_process

prepare_process(None)  # GLOG_v and the oneDNN ISA cap must be set before anything imports mindspore

import streamlit as st  # noqa: E402

from pages.common import DEFAULT_PAGE, PAGES, page_title, render_sidebar, t  # noqa: E402
from pages.gate import require_access  # noqa: E402
from core.runtime import tune_gc_for_server  # noqa: E402

tune_gc_for_server()

st.set_page_config(page_title=t("common.app_name"), page_icon="🧠", layout="wide",
                   initial_sidebar_state="expanded")

# Our own sidebar links replace Streamlit's automatic navigation, which briefly lists the modules of
# pages/ during reruns.
page = st.navigation([st.Page(path, title=page_title(url), icon=icon, url_path=url, default=path == DEFAULT_PAGE)
                      for path, icon, url in PAGES], position="hidden")
require_access()  # before anything of the app is drawn
render_sidebar(live_status=page.url_path not in ("train", ""))  # Train shows the run live itself
st.session_state["_in_frame"] = True  # pages check this (see pages.common.ensure_frame)
try:
    page.run()
finally:
    st.session_state["_in_frame"] = False
