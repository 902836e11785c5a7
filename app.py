"""MindSpore Training Studio: the frame (navigation, page config, the gate, the sidebar) around every page."""
from core.runtime import prepare_process

prepare_process(None)  # GLOG_v and the oneDNN ISA cap must be set before anything imports mindspore

import streamlit as st  # noqa: E402

from core.runtime import tune_gc_for_server  # noqa: E402
from ui.gate import require_access  # noqa: E402
from ui.i18n import t  # noqa: E402
from ui.navigation import DEFAULT_PAGE, PAGES, page_title, render_sidebar  # noqa: E402

tune_gc_for_server()

st.set_page_config(page_title=t("common.app_name"), page_icon="🧠", layout="wide",
                   initial_sidebar_state="expanded")

# Our own sidebar links replace Streamlit's automatic navigation, which briefly lists the pages during reruns.
page = st.navigation([st.Page(path, title=page_title(url), icon=icon, url_path=url, default=path == DEFAULT_PAGE)
                      for path, icon, url in PAGES], position="hidden")
require_access()  # before anything of the app is drawn
render_sidebar(live_status=page.url_path not in ("train", ""))  # Train shows the run live itself
page.run()
