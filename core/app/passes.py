"""Signed passes: what lets a browser in, and as whom.

- The **class link**'s token (`?class=…`): lets a student's browser in as a *viewer* (watch every run, draw on
  Draw & predict; no Start, no controls), without the password, which the class never learns. It lasts until
  the end of the next day (UTC), so the link a teacher shows stays the same for a day's lessons.
- The **access cookie** (`studio_access`, HttpOnly, set by the server's /studio/admit route): keeps a browser
  signed in across reloads, as a member (after the password) or a viewer; it expires after COOKIE_HOURS.
- The **ticket**: a one-minute pass a page hands the browser to carry to /studio/admit, which turns it into the
  cookie once (a page's script cannot set an HttpOnly cookie; the server's response does).

- The **admin** pass: what the server's access token (core/app/server_token.py) becomes at /studio/admit: the
  only way into a server with no password and no sign-in, and its admin on one with either.

Each is `<payload>.<HMAC-SHA256>` under a key derived from the store's random secret (256 bits, kept where every
app server of the store finds it: core/runs/store/server_settings.py) and the password's scrypt hash (salted by
the secret). A class link therefore tells nothing about the password: without the secret, no guess can be
checked offline. Changing the password or rotating the secret revokes every link, ticket and cookie. No
Streamlit here: the route, the gate and tests use these.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

__all__ = ["PASS_COOKIE", "CLASS_PARAM", "VIEWER", "MEMBER", "ADMIN", "ROLES", "COOKIE_HOURS", "Pass",
           "signing_key", "password_hash", "password_matches", "class_token", "cookie_value", "ticket", "read_pass",
           "TicketBook"]

PASS_COOKIE = "studio_access"
CLASS_PARAM = "class"
VIEWER, MEMBER, ADMIN = "viewer", "member", "admin"
ROLES = (VIEWER, MEMBER, ADMIN)
COOKIE_HOURS = 12
TICKET_S = 60
# scrypt's cost: 16 MiB and ~50 ms a hash here; a guess of the password costs the same (and passes the throttle)
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2 ** 14, 8, 1


@dataclass(frozen=True)
class Pass:
    purpose: str    # class | cookie | ticket
    role: str       # viewer | member
    expires: float  # seconds since the epoch
    nonce: str = ""


@functools.lru_cache(maxsize=16)
def password_hash(secret: bytes, password: str) -> bytes:
    """The password as the studio keeps it: scrypt, salted with a value derived from the server's secret (one
    hash per server and password, cached: a page run must not pay ~50 ms for it)."""
    salt = hmac.new(secret, b"studio-password-salt", hashlib.sha256).digest()
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)


def password_matches(secret: bytes, given: str, expected: str) -> bool:
    """Whether `given` is the password: their salted slow hashes compared in constant time. Each guess costs a
    scrypt (the given one is not cached: a guesser must not fill the cache)."""
    salt = hmac.new(secret, b"studio-password-salt", hashlib.sha256).digest()
    tried = hashlib.scrypt(given.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return hmac.compare_digest(tried, password_hash(secret, expected))


def signing_key(secret: bytes, password: str | None) -> bytes:
    """The key of every pass: the server's secret bound to the password's hash (a new password or a new secret,
    a new key)."""
    bound = password_hash(secret, password) if password else b""
    return hmac.new(secret, b"studio-passes\0" + bound, hashlib.sha256).digest()


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
    if kind != purpose or role not in ROLES or expires < (now if now is not None else time.time()):
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
