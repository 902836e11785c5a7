"""The class link and its QR code, on the teacher's screen: students who open it watch every run live and draw
on Draw & predict without the password, and cannot start, pause or change runs (core/app/passes.py)."""
from __future__ import annotations

import io
from urllib.parse import urlencode

import segno
import streamlit as st

from core.app.class_address import ClassAddress, Reach, class_address
from core.app.passes import CLASS_PARAM, class_token, signing_key
from ui.session import get_store
from ui.deployment import configured_password
from ui.identity import current_person
from ui.language import LANG_PARAM, t

__all__ = ["class_link", "class_link_popover", "qr_png"]

# The code fits the room's screen beside the link: at 853×480 (a 1280×720 projector at 150 %) a popover has about
# 330 px of height, and a code cut at its bottom cannot be scanned.
_FIT = """<style>
[class*="st-key-class_qr"] [data-testid="stImage"] img {
  width: min(300px, calc(100vh - 200px)) !important; min-width: 160px; height: auto; }
</style>"""


def class_link() -> tuple[str, ClassAddress]:
    """The link on the Train page with a viewer's pass, at an address phones can open (core/app/class_address.py),
    and that address with what it means."""
    address = class_address(st.context.url or "http://localhost:8501/", st.get_option("server.address"))
    query = {CLASS_PARAM: class_token(signing_key(get_store().server_secret(), configured_password()))}
    if LANG_PARAM in st.query_params:
        query[LANG_PARAM] = st.query_params[LANG_PARAM]
    return f"{address.base}/train?{urlencode(query)}", address


@st.cache_data(max_entries=16, show_spinner=False)
def qr_png(text: str, scale: int = 10) -> bytes:
    """The QR code of `text` as a PNG (medium error correction: a projector's glare is forgiven). Cached: the
    sidebar draws it on every page run, and making it takes ~12 ms; the link changes once a day."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


def class_link_popover(where=st, key: str = "class_qr") -> None:
    """A button that opens the code and the link (for members: a viewer has nothing to hand out); key: one per
    place it is drawn (the sidebar and the lesson bar share a page)."""
    if current_person().viewer:
        return
    link, address = class_link()
    # no tooltip on the button: it stayed over the code's top-right corner while the popover was open
    with where.popover("📱 " + t("gate.class_link")):
        st.html(_FIT)
        row = st.container(horizontal=True, key=key, gap="medium")
        row.image(qr_png(link), width=300)
        with row.container(width=260):
            if not address.phones_can_open:
                st.warning(t(f"gate.class_reach_{address.reach}"))  # first: the code beside it will not work
            st.code(link, language=None, wrap_lines=True)
            if address.reach is Reach.NETWORK:
                st.info(t("gate.class_reach_network", host=address.base.split("://", 1)[1]))
            st.caption(t("gate.class_link_caption") + " " + t("gate.class_link_help"))

