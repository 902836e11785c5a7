"""Signed passes: what lets a browser in, and as whom.

- The **class link**'s token (`?class=…`): lets a student's browser in as a *viewer* (watch every run, draw on
  Draw & predict; no Start, no controls), without the password, which the class never learns. It lasts until
  the end of the next day (UTC), so the link a teacher shows stays the same for a day's lessons.
- The **access cookie** (`studio_access`, HttpOnly, set by the server's /studio/admit route): keeps a browser
  signed in across reloads, as a member (after the password) or a viewer; it expires after COOKIE_HOURS.
- The **ticket**: a one-minute pass a page hands the browser to carry to /studio/admit, which turns it into the
  cookie once (a page's script cannot set an HttpOnly cookie; the server's response does).

Each is `<payload>.<HMAC-SHA256>` under a key derived from $STUDIO_SECRET, else the shared password (every app
server of a team has the same one), else a key made when the process starts (a local server: its links and
cookies last until it restarts). No Streamlit here: the route, the gate and tests use these.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass

__all__ = ["SECRET_ENV", "PASS_COOKIE", "CLASS_PARAM", "VIEWER", "MEMBER", "COOKIE_HOURS", "Pass", "signing_key",
           "class_token", "cookie_value", "ticket", "read_pass", "TicketBook"]

SECRET_ENV = "STUDIO_SECRET"
PASS_COOKIE = "studio_access"
CLASS_PARAM = "class"
VIEWER, MEMBER = "viewer", "member"
COOKIE_HOURS = 12
TICKET_S = 60
_PROCESS_KEY = secrets.token_bytes(32)


@dataclass(frozen=True)
class Pass:
    purpose: str    # class | cookie | ticket
    role: str       # viewer | member
    expires: float  # seconds since the epoch
    nonce: str = ""


def signing_key(password: str | None) -> bytes:
    material = os.environ.get(SECRET_ENV) or password
    if not material:
        return _PROCESS_KEY
    return hashlib.sha256(b"studio-pass\0" + material.encode("utf-8")).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _issue(key: bytes, p: Pass) -> str:
    payload = _b64(json.dumps([p.purpose, p.role, int(p.expires), p.nonce], separators=(",", ":")).encode())
    return payload + "." + _b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())


def class_token(key: bytes, now: float | None = None) -> str:
    """The class link's token: a viewer's pass until the end of the next day (UTC)."""
    day = int((now if now is not None else time.time()) // 86400)
    return _issue(key, Pass("class", VIEWER, (day + 2) * 86400))


def cookie_value(key: bytes, role: str, now: float | None = None) -> str:
    return _issue(key, Pass("cookie", role, (now if now is not None else time.time()) + COOKIE_HOURS * 3600))


def ticket(key: bytes, role: str, now: float | None = None) -> str:
    return _issue(key, Pass("ticket", role, (now if now is not None else time.time()) + TICKET_S,
                            secrets.token_urlsafe(12)))


def read_pass(key: bytes, token: str | None, purpose: str, now: float | None = None) -> Pass | None:
    """The pass, when `token` is one of `purpose`, signed with `key` and not expired; else None."""
    if not token or not token.isascii() or token.count(".") != 1 or len(token) > 512:
        return None
    payload, signature = token.split(".")
    expected = _b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())
    if not hmac.compare_digest(signature, expected):
        return None
    try:
        kind, role, expires, nonce = json.loads(_unb64(payload))
    except (ValueError, TypeError):
        return None
    if kind != purpose or role not in (VIEWER, MEMBER) or expires < (now if now is not None else time.time()):
        return None
    return Pass(kind, role, float(expires), str(nonce))


class TicketBook:
    """Tickets already turned into cookies, so that one seen in a browser's history cannot be used again
    (per process: tickets last a minute)."""

    def __init__(self):
        self._used: dict[str, float] = {}

    def first_use(self, p: Pass) -> bool:
        now = time.time()
        self._used = {n: exp for n, exp in self._used.items() if exp >= now}
        if p.nonce in self._used:
            return False
        self._used[p.nonce] = p.expires
        return True
