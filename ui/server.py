"""How this server is deployed: its shared password and whether other machines can reach it."""
from __future__ import annotations

import os

import streamlit as st

from core.app.access import PASSWORD_ENV, is_loopback

__all__ = ["configured_password", "server_exposed"]


def configured_password() -> str | None:
    env = os.environ.get(PASSWORD_ENV)
    if env:
        return env
    try:
        return st.secrets.get("password") or None
    except FileNotFoundError:  # Streamlit's "no secrets.toml" error is one
        return None


def server_exposed() -> bool:
    return not is_loopback(st.get_option("server.address"))
