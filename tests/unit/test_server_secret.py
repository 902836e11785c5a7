"""The server's secret (core/runs/store/server_settings.py) and the passes signed under it (core/app/passes.py):
a class link taken from the QR code tells a student nothing about the password, offline guessing included."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat

import pytest

from core.app.passes import (MEMBER, PASS_COOKIE, SCRYPT_N, class_token, cookie_value, password_hash,
                             password_matches, read_pass, signing_key)
from core.runs.store import RunStore
from core.cli.store import main as store_command
from core.runs.store.server_settings import SECRET_FILE, SecretError

BOTH_DATABASES = True
CLASSROOM_PASSWORD = "tiger42"


def _dictionary() -> list[str]:
    """What a student would try: common words with digits, the classroom password among them."""
    words = ["password", "letmein", "mnist", "lenet", "teacher", "class", "school", "tiger", "dragon", "monkey"]
    return [f"{w}{n}" for w in words for n in ("", *map(str, range(1000)))]


def _b64(data: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _keys_a_guess_gives(guess: str) -> list[bytes]:
    """The keys a student can make from a guess without the server's secret: the probe's (an unsalted SHA-256
    of the password, as the studio used to sign with) and the password itself."""
    return [hashlib.sha256(b"studio-pass\0" + guess.encode()).digest(), guess.encode()]


def _keys_knowing_the_password(password: str) -> list[bytes]:
    """This code's derivation under secrets a student could try: none, or the password's own hash."""
    return _keys_a_guess_gives(password) + [signing_key(b"", password),
                                             signing_key(hashlib.sha256(password.encode()).digest(), password)]


def test_a_class_link_and_a_dictionary_give_neither_the_password_nor_a_cookie(store, monkeypatch):
    monkeypatch.delenv("STUDIO_SECRET", raising=False)
    key = signing_key(store.server_secret(), CLASSROOM_PASSWORD)
    link_token = class_token(key)  # what the QR code carries
    dictionary = _dictionary()
    assert CLASSROOM_PASSWORD in dictionary
    payload, signature = link_token.split(".")
    found = [guess for guess in dictionary for k in _keys_a_guess_gives(guess)
             if hmac.compare_digest(_b64(hmac.new(k, payload.encode(), hashlib.sha256).digest()), signature)]
    assert found == [], "an offline guess matched the class link's signature"
    for k in _keys_knowing_the_password(CLASSROOM_PASSWORD):  # even knowing the password, no cookie without the secret
        assert read_pass(key, cookie_value(k, MEMBER), "cookie") is None
    assert CLASSROOM_PASSWORD not in json.dumps(link_token)


def test_the_secret_is_random_kept_for_every_server_of_the_store_and_private(store, tmp_path, database,
                                                                              monkeypatch):
    monkeypatch.delenv("STUDIO_SECRET", raising=False)
    secret = store.server_secret()
    assert len(secret) == 32 and secret != bytes(32)
    other_host = RunStore(tmp_path / "another-host", database) if database else RunStore(store.root)
    assert other_host.server_secret() == secret, "every app server of the store signs with the same secret"
    file = store.root / SECRET_FILE
    if database:  # a team's: in its database, nothing on one host's disk
        assert not file.exists()
    else:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert len(file.read_text().strip()) == 64
    fresh = RunStore(tmp_path / "a-new-store", f"sqlite:///{tmp_path}/a-new-store.sqlite")
    assert fresh.server_secret() != secret, "each store makes its own"


def test_rotating_the_secret_or_changing_the_password_revokes_every_link_and_cookie(store, database, monkeypatch,
                                                                                     capsys):
    monkeypatch.delenv("STUDIO_SECRET", raising=False)
    key = signing_key(store.server_secret(), "pw")
    link, cookie = class_token(key), cookie_value(key, MEMBER)
    assert read_pass(signing_key(store.server_secret(), "a new pw"), cookie, "cookie") is None
    args = ["rotate-secret", "--store", str(store.root)] + (["--database-url", database] if database else [])
    assert store_command(args) == 0
    assert "revoked" in capsys.readouterr().out
    store._secret_read = None  # this process would see the new one within seconds; now
    new_key = signing_key(store.server_secret(), "pw")
    assert new_key != key
    assert read_pass(new_key, link, "class") is None and read_pass(new_key, cookie, "cookie") is None


def test_the_password_is_kept_as_a_salted_slow_hash():
    a, b = os.urandom(32), os.urandom(32)
    assert password_hash(a, "pw") != password_hash(b, "pw"), "salted by the server's secret"
    assert password_hash(a, "pw") != hashlib.sha256(b"pw").digest()
    assert SCRYPT_N >= 2 ** 14
    assert password_matches(a, "a b", "a b") and not password_matches(a, "a", "a ") \
        and not password_matches(a, "", "x")


def test_a_secret_from_the_environment_must_be_long_and_a_bad_file_is_said(store, monkeypatch, tmp_path):
    monkeypatch.setenv("STUDIO_SECRET", "short")
    store._secret_read = None
    with pytest.raises(SecretError, match="at least 32"):
        store.server_secret()
    monkeypatch.setenv("STUDIO_SECRET", "x" * 40)
    store._secret_read = None
    assert store.server_secret() == b"x" * 40
    with pytest.raises(SecretError, match="STUDIO_SECRET"):
        store.rotate_secret()
    monkeypatch.delenv("STUDIO_SECRET")
    bad = RunStore(tmp_path / "bad", f"sqlite:///{tmp_path}/bad.sqlite")
    (bad.root / SECRET_FILE).write_text("not hex")
    with pytest.raises(SecretError, match="Delete it"):
        bad.server_secret()


def test_the_cookie_name_is_the_access_cookie():
    assert PASS_COOKIE == "studio_access"
