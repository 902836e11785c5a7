"""MindSpore Training Studio: the frame (navigation, page config, sidebar with the active run)."""
from core.runtime import prepare_process

prepare_process(None)  # GLOG_v and the oneDNN ISA cap must be set before anything imports mindspore

import streamlit as st  # noqa: E402

from pages.common import sidebar_status  # noqa: E402

st.set_page_config(page_title="MindSpore Training Studio", page_icon="🧠", layout="wide")

PAGES = [
    st.Page("pages/data.py", title="Data", icon="🔢", url_path="data"),
    st.Page("pages/configure.py", title="Configure", icon="⚙️", url_path="configure"),
    st.Page("pages/train.py", title="Train", icon="🏋️", url_path="train", default=True),
    st.Page("pages/evaluate.py", title="Evaluate", icon="📊", url_path="evaluate"),
    st.Page("pages/draw.py", title="Draw & predict", icon="✏️", url_path="draw"),
    st.Page("pages/runs.py", title="Runs", icon="🗂️", url_path="runs"),
]

page = st.navigation(PAGES)
with st.sidebar:
    sidebar_status()
page.run()
