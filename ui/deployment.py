"""How this server is deployed: its shared password and whether other machines can reach it."""
from __future__ import annotations

import os
from urllib.parse import urlsplit

import streamlit as st

from core.app.access import PASSWORD_ENV, is_loopback

__all__ = ["configured_password", "server_exposed", "oidc_configured", "behind_proxy", "shared_server",
           "client_address"]

# A request that carries one of these came through a reverse proxy: people elsewhere reach this server.
FORWARDED_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-host", "x-forwarded-proto")


def configured_password() -> str | None:
    env = os.environ.get(PASSWORD_ENV)
    if env:
        return env
    try:
        return st.secrets.get("password") or None
    except FileNotFoundError:  # Streamlit's "no secrets.toml" error is one
        return None


def oidc_configured() -> bool:
    """Sign-in with OpenID Connect: an [auth] section in .streamlit/secrets.toml."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:
        return False


def behind_proxy() -> bool:
    """This session's request came through a reverse proxy: forwarded headers, or a browser that named another
    address than this server's own (a proxy that adds no header, as nginx's plain proxy_pass: the browser's
    Origin still says where it went)."""
    headers = st.context.headers
    return any(headers.get(h) for h in FORWARDED_HEADERS) or _reached_elsewhere(headers.get("origin", ""))


def _reached_elsewhere(origin: str) -> bool:
    if not origin:
        return False  # not a browser's websocket (AppTest, a script): nothing says it came from elsewhere
    try:
        parts = urlsplit(origin)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return True  # an Origin this server cannot read is not its own
    return not (is_loopback(parts.hostname) and port == int(st.get_option("server.port")))


def client_address() -> str:
    """The browser's address: the first forwarded hop when a proxy on this machine passed the request on, else
    the connection's. (A forged header only moves an attacker to another address's count; the throttle's
    line across all addresses still holds.)"""
    direct = st.context.ip_address or ""
    forwarded = st.context.headers.get("x-forwarded-for", "")
    if forwarded and (not direct or is_loopback(direct)):
        return forwarded.split(",")[0].strip()
    return direct or "unknown"


def server_exposed() -> bool:
    """Other machines can reach this server: it listens beyond loopback, or this request was forwarded."""
    return not is_loopback(st.get_option("server.address")) or behind_proxy()


def shared_server() -> bool:
    """More than one person may use this server: exposed, or a password or sign-in is configured. Only a server
    that is none of these (one person on their own machine) may read any folder."""
    return server_exposed() or configured_password() is not None or oidc_configured()
