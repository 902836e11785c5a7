"""Who is using this browser session, asked once before any page (after the password gate):

- OpenID Connect (an `[auth]` section in .streamlit/secrets.toml): Streamlit's st.login / st.user / st.logout;
  the person is the signed-in user (their e-mail is what runs record as owner).
- A shared password: a display name, given once per browser and kept across reloads in a cookie with a random
  token; the name belongs to that browser (core/runs/people.claim_name), so nobody takes over another's runs by
  typing their name.
- A local single-user server (loopback, no password, no sign-in): one person, who may do everything.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from dataclasses import replace
from urllib.parse import quote, unquote

from typing import TypeVar
from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.runs.people.actions import Actions, history
from core.runs.people.permissions import LOCAL, MAX_NAME, NotAllowed, Person, claim_name, person
from core.runs.rows import Run
from ui.language import say, t
from core.app.passes import ADMIN, PASS_COOKIE, VIEWER
from ui.deployment import configured_password, oidc_configured
from ui.gate import session_role
from ui.session import get_store

__all__ = ["identify", "current_person", "actions", "attempt", "owner_label", "history_panel", "COOKIE",
           "refused_here"]

T = TypeVar("T")
COOKIE = "studio_person"  # "<token>:<name>" of a shared-password server's display name
_KEY = "_person"


def identify() -> None:
    """Stop the script until this session's person is known (signing in or giving a name as needed)."""
    if session_role() == VIEWER:  # in by the class link: no name to give (nor one to reserve), no sign-in
        st.session_state[_KEY] = _viewer()
    elif _KEY in st.session_state and not oidc_configured():
        _write_cookie()
    elif oidc_configured():
        st.session_state[_KEY] = _signed_in()
    elif configured_password() is None:
        st.session_state[_KEY] = LOCAL
    else:
        st.session_state[_KEY] = _display_name()
    who = st.session_state[_KEY]
    if session_role() == VIEWER and not who.viewer:  # in by the class link: watches and draws
        who = st.session_state[_KEY] = replace(who, viewer=True, admin=False)
    if session_role() == ADMIN and not who.admin:  # in by the server's access link: its admin
        who = st.session_state[_KEY] = replace(who, admin=True)
    if session_role() == ADMIN and configured_password() is not None:
        st.sidebar.caption("🔑 " + t("gate.admin_by_token"))
    if who.viewer:
        st.sidebar.caption("👀 " + t("gate.viewing"))
    if who.name and not who.signed_in_with_provider:  # signed-in users see theirs beside Sign out (_signed_in)
        st.sidebar.caption(t("gate.you_are", name=who.name))


def current_person() -> Person:
    return st.session_state.get(_KEY, LOCAL)


def actions() -> Actions:
    """What this session's person does to the runs: checked and recorded in core (core/runs/people/actions.py)."""
    return Actions(get_store(), current_person())


def attempt(act: Callable[..., T], *args, show: Callable[[str], object] = st.error) -> T | None:
    """Do an action; a refusal (not the run's owner nor an admin) is said (on the page, or by `show`, as a
    widget's callback must: it draws nothing) and gives None."""
    try:
        return act(*args)
    except NotAllowed as e:
        show(say(e))
        return None


def refused_here(what: str) -> bool:
    """True (and said, in a line) where this person may not do `what` at all: a viewer's Start, sweep, upload."""
    if current_person().may(what):
        return False
    st.caption("👀 " + t("gate.viewer_cannot", what=t(f"messages.action_{what}")))
    return True


def owner_label(run: Run) -> str:
    """Who a run belongs to, as pages show it."""
    return run.submitter or t("runs.owner_nobody")


def history_panel(store) -> None:
    """Who did what, when (the store's history: starts, controls, renames, deletes, uploads, exports, sweeps,
    refused attempts marked)."""
    lines = history(store)
    with st.expander("📜 " + t("runs.history", n=len(lines))):
        st.dataframe(pd.DataFrame([{
            t("runs.history_when"): dt.datetime.fromtimestamp(h.t).strftime("%Y-%m-%d %H:%M:%S"),
            t("runs.history_who"): h.who, t("runs.history_what"): h.action, t("runs.history_run"): h.target,
            t("runs.history_detail"): h.detail, t("runs.history_allowed"): h.allowed} for h in lines]),
            hide_index=True, width="stretch")


def _viewer() -> Person:
    """A student in by the class link: a name of its own per browser ("student-…", from its access cookie, so a
    reload keeps it and their drawings), never one from the people table."""
    held = st.session_state.get(_KEY)
    if isinstance(held, Person) and held.viewer:
        return held
    cookie = st.context.cookies.get(PASS_COOKIE)
    seed = cookie if isinstance(cookie, str) and cookie else secrets.token_hex(16)
    return Person("student-" + hashlib.sha256(seed.encode()).hexdigest()[:6], viewer=True)


def _signed_in() -> Person:
    if not st.user.is_logged_in:
        st.title("🧠 " + t("common.app_name"))
        st.write(t("gate.sign_in_why"))
        if st.button("🔑 " + t("gate.sign_in"), key="sign_in", type="primary"):
            st.login()
        st.stop()
    email, name = str(st.user.get("email") or ""), str(st.user.get("name") or st.user.get("email") or "")
    with st.sidebar:
        st.caption(t("gate.signed_in_as", name=name))
        if st.button(t("gate.sign_out"), key="sign_out"):
            st.logout()
    return replace(person(name, email), signed_in_with_provider=True)


def _display_name() -> Person:
    token, name = _from_cookie()
    if token and name and claim_name(get_store(), name, token) is None:
        return person(name, proven=False)
    st.title("🧠 " + t("common.app_name"))
    with st.form("display_name"):
        given = st.text_input(t("gate.your_name"), max_chars=MAX_NAME, key="display_name_input",
                              help=t("gate.your_name_help"))
        submitted = st.form_submit_button(t("gate.enter"))
    if submitted:
        token = token or secrets.token_urlsafe(24)
        refused = claim_name(get_store(), given, token)
        if refused is None:
            _remember(token, given.strip())
            st.session_state[_KEY] = person(given.strip(), proven=False)
            st.rerun()
        st.error(say(refused))
    st.stop()


def _from_cookie() -> tuple[str, str]:
    cookie = st.context.cookies.get(COOKIE)
    raw = (unquote(cookie) if isinstance(cookie, str) else "") or st.session_state.get("_person_cookie", "")
    token, _, name = raw.partition(":")
    return token, name


def _remember(token: str, name: str) -> None:
    """Keep the name in this browser: a cookie the next page load sends (written by this session's next runs,
    as this one ends in a rerun; this session keeps the name meanwhile)."""
    st.session_state["_person_cookie"] = f"{token}:{name}"


def _write_cookie() -> None:
    """Write the name's cookie on every run until the browser's own cookie (sent when the page loaded) says it:
    a run may be replaced by the next before its page reaches the browser, so one write alone can be lost."""
    value = st.session_state.get("_person_cookie")
    sent = st.context.cookies.get(COOKIE)
    if value is None or (isinstance(sent, str) and unquote(sent) == value):
        return
    cookie = json.dumps(f"{COOKIE}={quote(value, safe='')}; path=/; max-age=31536000; SameSite=Strict")
    script = "<script>document.cookie = " + cookie.replace("</", "<\\/") + ";</script>"
    st.html(script, unsafe_allow_javascript=True)
