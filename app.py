"""MindSpore Training Studio: the frame (navigation, page config, the gate, the sidebar) around every page."""
from core.runtime import prepare_process

prepare_process(None)  # GLOG_v and the oneDNN ISA cap must be set before anything imports mindspore

import streamlit as st  # noqa: E402

from core.app import model_service  # noqa: E402
from core.runtime import tune_gc_for_server  # noqa: E402
from core.runs.store import DatabaseError  # noqa: E402
from ui.gate import require_access  # noqa: E402
from ui.language import t  # noqa: E402
from ui.identity import identify  # noqa: E402
from ui.page_arrival import arrive  # noqa: E402
from ui.navigation import DEFAULT_PAGE, PAGES, page_title, render_sidebar  # noqa: E402
from ui.present import presentation_style, presenting  # noqa: E402
from ui.session import dispatch_queue, get_store  # noqa: E402
from ui.store_down import say_store_down  # noqa: E402

tune_gc_for_server()

st.set_page_config(page_title=t("common.app_name"), page_icon="🧠", layout="wide",
                   initial_sidebar_state="collapsed" if presenting() else "auto")  # auto: folded away on a phone


def open_default_page() -> None:
    """The root URL. Streamlit serves its default page at the root only (`/train` would be "page not
    found"), so the root is this page: it opens the Train page at its own URL, with the link's parameters."""
    st.switch_page(DEFAULT_PAGE, query_params=st.query_params.to_dict())


# Our own sidebar links replace Streamlit's automatic navigation, which briefly lists the pages during reruns.
page = st.navigation([st.Page(open_default_page, title=t("common.app_name"), url_path="home", default=True)]
                     + [st.Page(path, title=page_title(url), icon=icon, url_path=url) for path, icon, url in PAGES],
                     position="hidden")
if page.url_path == "":
    open_default_page()  # before anything is drawn: the Train page's run draws it all, once
require_access()  # before anything of the app is drawn
store_error = None
try:
    dispatch_queue()  # this server starts queued runs (once: a cached resource)
    identify()  # who this is: signed in, a display name, or the one person of a local server
    render_sidebar(page_draws_status=page.url_path == "train")  # Train's live view draws the status with its own
    arrive(page.url_path)  # the new page's top in view, the phone's drawer closed
    presentation_style()
    page.run()
except DatabaseError as e:  # the store's database gone, broken or unreachable: said on every page, what to do
    store_error = e
    say_store_down(e)
finally:  # after the first page's run (a page may stop or switch): MindSpore loads in the background, once
    if store_error is None and model_service.preload_wanted():
        model_service.preload(get_store())
