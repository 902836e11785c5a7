"""The gate, drawn before any page. Streamlit has no authentication of its own.

- No password and no sign-in: the server's access link (its token, core/app/server_token.py) is the only way in;
  everyone else gets the instructions. STUDIO_OPEN=1 (a trusted single-user machine) lets in whoever reaches a
  loopback server; an exposed one then refuses to serve anything but the instructions.
- STUDIO_PASSWORD (or `password` in .streamlit/secrets.toml): the password, or the access link, which makes its
  holder this server's admin.

A class link (?class=<signed token>, core/app/passes.py) lets a browser in as a viewer without the password. A
browser let in (by either) gets a signed HttpOnly cookie from the server's /studio/admit route, so a reload
asks for nothing until it expires."""
from __future__ import annotations

import json
import math
from urllib.parse import urlencode, urlsplit

import streamlit as st

from core.app.access import PASSWORD_ENV
from core.app.passes import (ADMIN, CLASS_PARAM, MEMBER, PASS_COOKIE, VIEWER, password_matches, read_pass,
                             signing_key, ticket)
from core.app.server_token import OPEN_ENV, TOKEN_PARAM, open_without_token, server_token, token_matches
from ui.admit_route import ADMIT_PATH, admit_available, safe_next
from core.app.throttle import THROTTLE
from ui.language import t
from ui.deployment import behind_proxy, client_address, configured_password, oidc_configured, server_exposed
from ui.session import get_store
from ui.store_down import say_store_down

__all__ = ["require_access", "session_role"]

_ROLE = "_role"


def session_role() -> str:
    """member, viewer or admin (known once require_access let the session in)."""
    return st.session_state.get(_ROLE, MEMBER)


def _let_in_by_pass(key: bytes) -> bool:
    """A class link (a viewer, for the rest of this session), the access cookie of an earlier visit, or the
    server's token in the page's link (its admin)."""
    if read_pass(key, st.query_params.get(CLASS_PARAM), "class") is not None:
        if st.session_state.get(_ROLE) not in (VIEWER, ADMIN):  # the teacher trying their own class link stays
            st.session_state[_ROLE] = VIEWER
            _carry_to_cookie(key, VIEWER)
        return True
    if st.session_state.get("_access") == "granted":  # let in earlier in this session
        return True
    if st.session_state.get(_ROLE) == VIEWER:  # the class parameter gone from the link: still a viewer
        return True
    cookie = read_pass(key, st.context.cookies.get(PASS_COOKIE), "cookie")
    if cookie is not None:
        _grant(cookie.role)
        return True
    if token_matches(st.query_params.get(TOKEN_PARAM)):  # a plain `streamlit run app.py` has no admit route
        _grant(ADMIN)
        del st.query_params[TOKEN_PARAM]
        _carry_to_cookie(key, ADMIN)
        return True
    return False


def _grant(role: str) -> None:
    st.session_state[_ROLE] = role
    st.session_state["_access"] = "granted"


def _carry_to_cookie(key: bytes, role: str) -> None:
    """Send the browser through the server's /studio/admit route, which sets the access cookie and brings it
    back here (only where this process serves that route: ./run.sh, not a plain `streamlit run app.py`)."""
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
    """Stop the script unless this session may use the app; its role (member, viewer or admin) is then known."""
    password = configured_password()
    try:
        secret = get_store().server_secret()
    except OSError as e:  # the store's database down (a restart) or its secret unreadable: said, retried
        say_store_down(e)
        st.stop()
    key = signing_key(secret, password)
    if _let_in_by_pass(key):
        return
    if password is None and oidc_configured():  # signing in (ui/identity.py) guards the server
        st.session_state[_ROLE] = MEMBER
        return
    if password is None:
        _open_server()
        return
    st.title("🧠 " + t("common.app_name"))
    with st.form("login"):
        given = st.text_input(t("gate.password"), type="password", key="login_password")
        submitted = st.form_submit_button(t("gate.enter"))
    if submitted:  # throttled across every session and per client address (core/app/throttle.py)
        verdict = THROTTLE.attempt(client_address(), lambda: password_matches(secret, given, password))
        if verdict.granted:
            _grant(MEMBER)
            _carry_to_cookie(key, MEMBER)
            st.rerun()
        if verdict.checked:  # locked out, a password is not read: saying "wrong" would mislead the right one
            st.error(t("gate.wrong"))
        if verdict.locked_for_s > 0:
            st.warning(t("gate.locked", s=math.ceil(verdict.locked_for_s)))
    st.stop()


def _open_server() -> None:
    """No password, no sign-in, no pass: only STUDIO_OPEN=1 on a loopback server lets this session in."""
    if not open_without_token():
        _say_once_where_the_link_is()
        st.title("🧠 " + t("common.app_name"))
        st.info(t("gate.token_required", env=OPEN_ENV))
        st.stop()
    if server_exposed():
        if behind_proxy():
            st.error(t("gate.exposed_proxy", env=PASSWORD_ENV))
        else:
            st.error(t("gate.exposed", address=st.get_option("server.address") or t("gate.every_interface"),
                       env=PASSWORD_ENV))
        st.stop()
    st.session_state[_ROLE] = MEMBER


@st.cache_resource(show_spinner=False)
def _say_once_where_the_link_is() -> None:
    """A plain `streamlit run app.py` (no ui/serve.py, which prints the link at start) prints it once here."""
    if admit_available():
        return
    link = f"http://127.0.0.1:{st.get_option('server.port')}/?{urlencode({TOKEN_PARAM: server_token()})}"
    print(f"MindSpore Training Studio opens with its access link: {link}", flush=True)
