"""The shared-password gate, drawn before any page. Streamlit has no authentication of its own.

Off while the server listens on loopback and no password is set. Set STUDIO_PASSWORD (or `password` in
.streamlit/secrets.toml) to turn it on. A server exposed to other machines without a password refuses to
serve anything but the instructions."""
from __future__ import annotations

import time

import streamlit as st

from core.app.access import PASSWORD_ENV, password_matches
from ui.i18n import t
from ui.server import configured_password, server_exposed

__all__ = ["require_access"]

FAILED_WAIT_S = 1.0  # slows password guessing


def require_access() -> None:
    """Stop the script unless this session may use the app."""
    password = configured_password()
    if password is None:
        if server_exposed():
            st.error(t("gate.exposed", address=st.get_option("server.address") or t("gate.every_interface"),
                       env=PASSWORD_ENV))
            st.stop()
        return
    if st.session_state.get("_access") == "granted":
        return
    st.title("🧠 " + t("common.app_name"))
    with st.form("login"):
        given = st.text_input(t("gate.password"), type="password", key="login_password")
        submitted = st.form_submit_button(t("gate.enter"))
    if submitted:
        if password_matches(given, password):
            st.session_state["_access"] = "granted"
            st.rerun()
        time.sleep(FAILED_WAIT_S)
        st.error(t("gate.wrong"))
    st.stop()
