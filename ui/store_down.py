"""What a page says while the run store's database cannot be used (a PostgreSQL restart, a full disk): the
reason and what to do, without a traceback, and it tries again by itself every few seconds, so the page comes
back on its own once the database does."""
from __future__ import annotations

import streamlit as st

from ui.language import say, t

__all__ = ["say_store_down", "RETRY_S"]

RETRY_S = 5


def say_store_down(error: Exception) -> None:
    """Say `error` (the store's own message) and rerun the page once the store answers again."""
    st.error(say(error))
    st.caption(t("common.store_retrying", s=RETRY_S))
    _try_again()


@st.fragment(run_every=RETRY_S)
def _try_again() -> None:
    from ui.session import get_store  # deferred: get_store stops the page itself when the store cannot open
    try:
        get_store().queue_state()
    except OSError:
        return  # still down: the next tick tries again
    st.rerun(scope="app")
