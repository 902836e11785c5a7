"""The shared-password gate, drawn before any page. Streamlit has no authentication of its own.

Off while the server listens on loopback, no request comes through a proxy and no password is set. Set
STUDIO_PASSWORD (or `password` in .streamlit/secrets.toml) to turn it on. A server exposed to other machines
without a password refuses to serve anything but the instructions.

A class link (?class=<signed token>, core/app/passes.py) lets a browser in as a viewer without the password. A
browser let in (by either) gets a signed HttpOnly cookie from the server's /studio/admit route, so a reload
asks for nothing until it expires."""
from __future__ import annotations

import json
import math
from urllib.parse import urlencode, urlsplit

import streamlit as st

from core.app.access import PASSWORD_ENV, password_matches
from core.app.passes import CLASS_PARAM, MEMBER, PASS_COOKIE, VIEWER, read_pass, signing_key, ticket
from ui.admit_route import ADMIT_PATH, admit_available, safe_next
from core.app.throttle import THROTTLE
from ui.language import t
from ui.deployment import behind_proxy, client_address, configured_password, oidc_configured, server_exposed

__all__ = ["require_access", "session_role"]

_ROLE = "_role"


def session_role() -> str:
    """member or viewer (known once require_access let the session in)."""
    return st.session_state.get(_ROLE, MEMBER)


def _let_in_by_pass(password: str | None) -> bool:
    """A class link (a viewer, for the rest of this session), or the access cookie of an earlier visit (where
    a password is set: a local server has nothing to remember)."""
    key = signing_key(password)
    if read_pass(key, st.query_params.get(CLASS_PARAM), "class") is not None:
        if st.session_state.get(_ROLE) != VIEWER:
            st.session_state[_ROLE] = VIEWER
            if password is not None:
                _carry_to_cookie(password, VIEWER)
        return True
    if st.session_state.get(_ROLE) == VIEWER:  # the class parameter gone from the link: still a viewer
        return True
    cookie = read_pass(key, st.context.cookies.get(PASS_COOKIE), "cookie") if password is not None else None
    if cookie is not None:
        st.session_state[_ROLE] = cookie.role
        st.session_state["_access"] = "granted"
        return True
    return False


def _carry_to_cookie(password: str | None, role: str) -> None:
    """Send the browser through the server's /studio/admit route, which sets the access cookie and brings it
    back here (only where this process serves that route: ./run.sh, not a plain `streamlit run app.py`)."""
    key = signing_key(password)
    held = read_pass(key, st.context.cookies.get(PASS_COOKIE), "cookie")
    if not admit_available() or (held is not None and held.role == role):
        return
    path = urlsplit(st.context.url or "/").path or "/"
    query = st.query_params.to_dict()  # the page's link as it is now (st.context.url has no query)
    back = safe_next(path + ("?" + urlencode(query) if query else ""))
    target = ADMIT_PATH + "?" + urlencode({"ticket": ticket(key, role), "next": back})
    st.html("<script>window.location.replace(" + json.dumps(target).replace("</", "<\\/") + ");</script>",
            unsafe_allow_javascript=True)
    st.stop()


def require_access() -> None:
    """Stop the script unless this session may use the app; its role (member or viewer) is then known."""
    password = configured_password()
    if _let_in_by_pass(password):
        return
    if password is None:
        if server_exposed() and not oidc_configured():  # signing in guards an exposed server too
            if behind_proxy():
                st.error(t("gate.exposed_proxy", env=PASSWORD_ENV))
            else:
                st.error(t("gate.exposed", address=st.get_option("server.address") or t("gate.every_interface"),
                           env=PASSWORD_ENV))
            st.stop()
        st.session_state[_ROLE] = MEMBER
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
            st.session_state[_ROLE] = MEMBER
            _carry_to_cookie(password, MEMBER)
            st.rerun()
        if verdict.checked:  # locked out, a password is not read: saying "wrong" would mislead the right one
            st.error(t("gate.wrong"))
        if verdict.locked_for_s > 0:
            st.warning(t("gate.locked", s=math.ceil(verdict.locked_for_s)))
    st.stop()
