"""A file made when a person asks for it, then downloaded: 📤 makes it and holds its bytes in the session, ⬇️
downloads them, and only while they are what the page shows now.

Not a deferred `st.download_button` (a callable for data, made at the click): Streamlit maps the file it makes
to no session, so two script runs ending anywhere on the server before the browser fetches it delete it, and the
browser's download fails: likely on a class round, whose projector and phones each run a fragment every few
seconds. Held bytes belong to this session's button and stay until the page stops showing it."""
from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import streamlit as st

from core.data.idx import DataError
from core.messages import Explained
from ui.language import say, t

__all__ = ["FileMade", "prepared_download"]


@dataclass(frozen=True)
class FileMade:
    """A file made for download: its bytes, name and MIME type."""
    data: bytes
    name: str
    mime: str


def prepared_download(key: str, wanted: Hashable, make: Callable[[], FileMade], label: str, *,
                      help: str | None = None, allowed: Callable[[], object] = lambda: True, where=None) -> None:
    """📤 label makes the file (when allowed() is true: a refusal says why itself); ⬇️ downloads it while it was
    made for `wanted`, what the page shows now (the same runs, drawings, format). A file not made says why."""
    where = st if where is None else where
    if where.button("📤 " + label, key=f"{key}_prepare", help=help) and allowed():
        try:
            with st.spinner(t("records.preparing")):
                st.session_state[key] = (wanted, make())
        except (Explained, DataError, OSError, ValueError) as e:
            st.error(t("records.failed", error=say(e)))
    ready = st.session_state.get(key)
    if ready is not None and ready[0] == wanted:
        made: FileMade = ready[1]
        where.download_button("⬇️ " + t("records.download", name=made.name), made.data, file_name=made.name,
                              mime=made.mime, key=f"{key}_download", on_click="ignore")
