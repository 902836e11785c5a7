"""The class link and its QR code, on the teacher's screen: students who open it watch every run live and draw
on Draw & predict without the password, and cannot start, pause or change runs (core/app/passes.py)."""
from __future__ import annotations

import io
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from core.app.passes import CLASS_PARAM, class_token, signing_key
from ui.session import get_store
from ui.deployment import configured_password
from ui.identity import current_person
from ui.language import LANG_PARAM, t

__all__ = ["class_link", "class_link_popover", "qr_png"]


def class_link() -> str:
    """This server's address as the teacher's browser reaches it, on the Train page, with a viewer's pass."""
    parts = urlsplit(st.context.url or "http://localhost:8501/")
    query = {CLASS_PARAM: class_token(signing_key(get_store().server_secret(), configured_password()))}
    if LANG_PARAM in st.query_params:
        query[LANG_PARAM] = st.query_params[LANG_PARAM]
    return f"{parts.scheme}://{parts.netloc}/train?{urlencode(query)}"


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
    link = class_link()
    with where.popover("📱 " + t("gate.class_link"), help=t("gate.class_link_help")), st.container(key=key):
        st.image(qr_png(link), width=360)
        st.caption(t("gate.class_link_caption"))
        st.code(link, language=None)
