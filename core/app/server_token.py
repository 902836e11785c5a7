"""The server's access token, as Jupyter Server has one: made at random when the server starts (or taken from
$STUDIO_TOKEN), printed by ./run.sh as a link, and swapped by the browser at /studio/admit for an HttpOnly cookie.

On a server with no password and no sign-in, that link is the only way in: without it every request, from any
browser, script, proxy or other local user, gets the instructions only. On a server with a password or sign-in,
the link makes its holder that server's admin. $STUDIO_OPEN=1 turns the token off for a trusted single-user
machine: then whoever reaches the port is the studio's one user (every local user, and anything a proxy passes).
No Streamlit here: the route, the gate, ui/serve.py and tests use these.
"""
from __future__ import annotations

import hmac
import os
import secrets
from urllib.parse import urlencode

__all__ = ["TOKEN_ENV", "OPEN_ENV", "TOKEN_PARAM", "server_token", "token_matches", "open_without_token",
           "access_link"]

TOKEN_ENV = "STUDIO_TOKEN"
OPEN_ENV = "STUDIO_OPEN"
TOKEN_PARAM = "token"
_PROCESS_TOKEN = secrets.token_urlsafe(32)  # 256 bits, this process's own


def server_token() -> str:
    return os.environ.get(TOKEN_ENV, "").strip() or _PROCESS_TOKEN


def token_matches(given: str | None) -> bool:
    """Whether `given` is this server's token (compared in constant time)."""
    if not given or not given.isascii():
        return False
    return hmac.compare_digest(given.encode("ascii"), server_token().encode("ascii"))


def open_without_token() -> bool:
    """$STUDIO_OPEN=1: a trusted single-user machine asks for no token."""
    return os.environ.get(OPEN_ENV, "").strip() == "1"


def access_link(base_url: str, admit_path: str, next_path: str = "/") -> str:
    """The link that lets its holder in: base_url (http://host:port) + the admit route with the token."""
    return base_url.rstrip("/") + admit_path + "?" + urlencode({TOKEN_PARAM: server_token(), "next": next_path})
