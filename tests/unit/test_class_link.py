"""The class link and the access cookie: signed passes (core/app/passes.py), the server's /studio/admit route
that turns a page's ticket into an HttpOnly cookie (ui/admit_route.py), and what a viewer may do."""
from __future__ import annotations

import os
import time
import warnings

import pytest
from starlette.applications import Starlette

from core.app.passes import (MEMBER, PASS_COOKIE, VIEWER, class_token, cookie_value, read_pass, signing_key,
                             ticket)
from core.config import TrainConfig
from core.runs.people.actions import Actions, history
from core.runs.people.permissions import NotAllowed, Person, person


def test_passes_are_signed_for_one_purpose_and_expire():
    secret = os.urandom(32)
    key = signing_key(secret, "the class password")
    token = class_token(key)
    assert read_pass(key, token, "class").role == VIEWER
    assert read_pass(key, token, "cookie") is None, "a class token is not a cookie"
    assert read_pass(signing_key(secret, "another password"), token, "class") is None, \
        "changing the password ends it"
    assert read_pass(signing_key(os.urandom(32), "the class password"), token, "class") is None, \
        "a new secret ends it"
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    assert read_pass(key, forged, "class") is None
    payload, sig = cookie_value(key, VIEWER).split(".")
    member = cookie_value(key, MEMBER).split(".")[0]
    assert read_pass(key, f"{member}.{sig}", "cookie") is None, "a viewer's signature does not make a member"
    a_day_later = time.time() + 13 * 3600
    assert read_pass(key, cookie_value(key, MEMBER), "cookie", now=a_day_later) is None, "the cookie expires"
    tomorrow_night = (int(time.time() // 86400) + 2) * 86400 + 1
    assert read_pass(key, token, "class", now=tomorrow_night) is None, "the class link lasts until tomorrow's end"
    for junk in (None, "", "x", "a.b.c", "é.é", "." * 600):
        assert read_pass(key, junk, "class") is None


def test_the_admit_route_sets_an_httponly_cookie_once_per_ticket_and_stays_on_this_site(store, monkeypatch):
    with warnings.catch_warnings():  # Starlette's TestClient on httpx (not httpx2) says it is deprecated
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    monkeypatch.setenv("STUDIO_PASSWORD", "pw")
    from ui.admit_route import ADMIT_PATH, routes
    client = TestClient(Starlette(routes=routes()), follow_redirects=False)
    key = signing_key(store.server_secret(), "pw")
    one = ticket(key, MEMBER)
    answer = client.get(ADMIT_PATH, params={"ticket": one, "next": "/train?present=1"})
    assert answer.status_code == 303 and answer.headers["location"] == "/train?present=1"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(PASS_COOKIE + "=") and "HttpOnly" in cookie and "Max-Age=43200" in cookie
    assert "samesite=lax" in cookie.lower()
    value = cookie.split(";")[0].split("=", 1)[1]
    assert read_pass(key, value, "cookie").role == MEMBER
    again = client.get(ADMIT_PATH, params={"ticket": one, "next": "/train"})
    assert again.status_code == 400 and "used already" in again.text and "set-cookie" not in again.headers
    elsewhere = client.get(ADMIT_PATH, params={"ticket": ticket(key, VIEWER), "next": "//evil.example/x"})
    assert elsewhere.headers["location"] == "/"
    assert client.get(ADMIT_PATH, params={"ticket": class_token(key)}).status_code == 400, "only a ticket admits"


@pytest.mark.store_on_disk  # it starts a worker process, which opens the store
def test_a_viewer_watches_and_may_start_nothing_and_every_refusal_is_recorded(store):
    teacher = Actions(store, person("Teacher"))
    run_id = teacher.start(TrainConfig(network="mlp", epochs=1))
    run = store.get(run_id)
    student = Actions(store, Person("Student", viewer=True))
    with pytest.raises(NotAllowed) as refused:
        student.start(TrainConfig(network="mlp", epochs=1))
    assert "class link" in str(refused.value)
    for act in (student.pause, student.stop, student.cancel, student.delete):
        with pytest.raises(NotAllowed):
            act(run)
    with pytest.raises(NotAllowed):
        student.require("sweep")
    assert student.person.may("view", run) and student.person.may("draw")
    refused_lines = [h for h in history(store) if h.who == "Student"]
    assert refused_lines and not any(h.allowed for h in refused_lines)
    assert [r.id for r in store.list_runs()] == [run_id], "nothing the viewer tried was started"


def test_a_viewer_is_not_told_to_press_start(store):
    """Configure and an empty Train speak to a student on the class link as one who watches, not one who starts."""
    from streamlit.testing.v1 import AppTest
    from tests.support.apptest import APP
    for name, said in (("configure", "the teacher starts the runs"), ("train", "the teacher's first run appears")):
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["_person"] = Person("student-1", viewer=True)
        at.run()
        at.switch_page(f"app_pages/{name}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        shown = [m.value for m in (*at.success, *at.info)]
        assert any(said in m for m in shown) and not any("press **Start training**" in m for m in shown), shown
