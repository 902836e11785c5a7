"""The shared-password gate, drawn before any page. Streamlit has no authentication of its own.

Off while the server listens on loopback, no request comes through a proxy and no password is set. Set
STUDIO_PASSWORD (or `password` in .streamlit/secrets.toml) to turn it on. A server exposed to other machines
without a password refuses to serve anything but the instructions."""
from __future__ import annotations

import math

import streamlit as st

from core.app.access import PASSWORD_ENV, password_matches
from core.app.throttle import THROTTLE
from ui.language import t
from ui.deployment import behind_proxy, client_address, configured_password, oidc_configured, server_exposed

__all__ = ["require_access"]

def require_access() -> None:
    """Stop the script unless this session may use the app."""
    password = configured_password()
    if password is None:
        if server_exposed() and not oidc_configured():  # signing in guards an exposed server too
            if behind_proxy():
                st.error(t("gate.exposed_proxy", env=PASSWORD_ENV))
            else:
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
    if submitted:  # throttled across every session and per client address (core/app/throttle.py)
        verdict = THROTTLE.attempt(client_address(), lambda: password_matches(given, password))
        if verdict.granted:
            st.session_state["_access"] = "granted"
            st.rerun()
        if verdict.checked:  # locked out, a password is not read: saying "wrong" would mislead the right one
            st.error(t("gate.wrong"))
        if verdict.locked_for_s > 0:
            st.warning(t("gate.locked", s=math.ceil(verdict.locked_for_s)))
    st.stop()
