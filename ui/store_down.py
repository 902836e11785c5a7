"""What a page says while the run store's database cannot be used (a PostgreSQL restart, a full disk): the
reason and what to do, without a traceback, and it tries again by itself every few seconds, so the page comes
back on its own once the database does."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from core.runs.store import DatabaseError
from ui.language import say, t
from ui.session import get_store

__all__ = ["say_store_down", "outage_safe", "RETRY_S"]

F = TypeVar("F", bound=Callable[..., object])

RETRY_S = 5


def say_store_down(error: Exception) -> None:
    """Say `error` (the store's own message) and rerun the page once the store answers again."""
    st.error(say(error))
    st.caption(t("common.store_retrying", s=RETRY_S))
    _try_again()


@st.fragment(run_every=RETRY_S)
def _try_again() -> None:
    try:
        get_store().queue_state()
    except OSError:
        return  # still down: the next tick tries again
    st.rerun(scope="app")


def outage_safe(draw: F) -> F:
    """A polling fragment's body that says the store's message instead of a traceback while its database is
    down; its next poll tries again, and draws as before once the database answers."""
    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        try:
            return draw(*args, **kwargs)
        except DatabaseError as e:
            st.error(say(e))
            st.caption(t("common.store_retrying", s=RETRY_S))
            return None
    return drawn  # type: ignore[return-value]
