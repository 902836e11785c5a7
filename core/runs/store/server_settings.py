"""The server's secret: the key under which class links, tickets and cookies are signed (core/app/passes.py).

It is random (256 bits), made on first use, and kept where every app server of the store finds it: in the
database where it is a server (PostgreSQL: the `settings` table), else in a file only its owner may read beside
the SQLite store (`<store>/secret.key`, mode 0600). $STUDIO_SECRET, when set, is used instead. Rotating it
(`python -m core.cli.store rotate-secret`) revokes every class link and cookie handed out under the old one.
A part of RunStore.
"""
from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from sqlalchemy import delete, insert, select

from core.messages import Explained
from core.runs.store.database import Database
from core.runs.store.schema import settings

__all__ = ["SECRET_ENV", "SECRET_FILE", "ServerSettings", "SecretError", "MIN_SECRET_CHARS"]

SECRET_ENV = "STUDIO_SECRET"
SECRET_FILE = "secret.key"
SECRET_ROW = "secret"
MIN_SECRET_CHARS = 32  # a $STUDIO_SECRET shorter than this is refused: it could be guessed
_READ_AGAIN_S = 5.0    # how long a process trusts the secret it read (a rotation reaches it within this)


class SecretError(Explained, OSError):
    """The server's secret cannot be read or used; the message says what to do."""


class ServerSettings:
    db: Database
    root: Path
    _secret_read: tuple[float, bytes] | None = None

    def server_secret(self) -> bytes:
        """The store's secret (made on first use); re-read every few seconds, so a rotation reaches every server."""
        held = self._secret_read
        if held is not None and time.monotonic() - held[0] < _READ_AGAIN_S:
            return held[1]
        secret = _from_environment() or (self._secret_in_database() if self.db.is_server else self._secret_in_file())
        self._secret_read = (time.monotonic(), secret)
        return secret

    def setting(self, name: str, default: str = "") -> str:
        """A setting the app server keeps in the store for the command lines (e.g. its admins)."""
        with self.db.read() as conn:
            value = conn.execute(select(settings.c.value).where(settings.c.name == name)).scalar()
        return default if value is None else str(value)

    def keep_setting(self, name: str, value: str) -> None:
        with self.db.write(lock="settings") as conn:
            conn.execute(self.db.upsert(settings, ("name",)), [{"name": name, "value": value, "updated": time.time()}])

    def rotate_secret(self) -> None:
        """A new secret: every link, ticket and cookie signed with the old one stops working."""
        if os.environ.get(SECRET_ENV):
            raise SecretError("secret_from_environment", env=SECRET_ENV)
        if self.db.is_server:
            with self.db.write(lock="settings") as conn:
                conn.execute(delete(settings).where(settings.c.name == SECRET_ROW))
        else:
            (self.root / SECRET_FILE).unlink(missing_ok=True)
        self._secret_read = None
        self.server_secret()

    def _secret_in_database(self) -> bytes:
        kept = self.setting(SECRET_ROW)
        if kept:
            return bytes.fromhex(kept)
        with self.db.write(lock="settings") as conn:  # the first server to need one makes it; the others read it
            value = conn.execute(select(settings.c.value).where(settings.c.name == SECRET_ROW)).scalar()
            if value is None:
                value = secrets.token_hex(32)
                conn.execute(insert(settings).values(name=SECRET_ROW, value=value, updated=time.time()))
        return bytes.fromhex(value)

    def _secret_in_file(self) -> bytes:
        path = self.root / SECRET_FILE
        try:
            text = path.read_text().strip()
            if len(text) != 64:
                raise ValueError(text)
            return bytes.fromhex(text)
        except FileNotFoundError:
            pass
        except ValueError:
            raise SecretError("secret_file_bad", path=path) from None
        except OSError as e:
            raise SecretError("secret_file_unreadable", path=path, why=e.strerror or str(e)) from None
        try:
            return _write_new_secret(path)
        except OSError as e:
            raise SecretError("secret_file_unwritable", path=path, why=e.strerror or str(e)) from None


def _write_new_secret(path: Path) -> bytes:
    """A new secret in a file of mode 0600, which appears whole and only if absent (written beside it, then
    linked): two servers starting at once keep the same one."""
    value = secrets.token_hex(32)
    beside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(beside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(value + "\n")
        try:
            os.link(beside, path)
        except FileExistsError:
            return bytes.fromhex(path.read_text().strip())
    finally:
        beside.unlink(missing_ok=True)
    return bytes.fromhex(value)


def _from_environment() -> bytes | None:
    raw = os.environ.get(SECRET_ENV, "")
    if not raw:
        return None
    if len(raw) < MIN_SECRET_CHARS:
        raise SecretError("secret_too_short", env=SECRET_ENV, n=len(raw), most=MIN_SECRET_CHARS)
    return raw.encode("utf-8")
