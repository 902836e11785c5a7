"""The server's access token (core/app/server_token.py): with no password and no sign-in, its link is the only
way in; with a password it makes its holder the server's admin. STUDIO_OPEN=1 is the single-user opt-out."""
from __future__ import annotations

import warnings

import pytest
from starlette.applications import Starlette

from core.app.passes import ADMIN, PASS_COOKIE, read_pass, signing_key
from core.app.server_token import server_token, token_matches
from core.config import TrainConfig
from core.runs.people.permissions import person
from tests.support.apptest import page
from tests.reliability.test_access import give_name


@pytest.fixture
def token_asked(monkeypatch):
    """A server as ./run.sh starts it: no STUDIO_OPEN."""
    monkeypatch.delenv("STUDIO_OPEN", raising=False)
    monkeypatch.delenv("STUDIO_PASSWORD", raising=False)


def _shows_only_the_instructions(at) -> bool:
    said = " ".join(i.value for i in at.info)
    return ("opens only with its access link" in said and not at.sidebar.markdown
            and not any(t.value.endswith("Train") for t in at.title))


def test_without_the_token_a_page_shows_only_how_to_get_in(store, token_asked):
    assert _shows_only_the_instructions(page("train"))
    assert _shows_only_the_instructions(page("runs", {"token": "a-guess"}))
    assert _shows_only_the_instructions(page("runs", {"token": server_token()[:-1]}))


def test_the_token_in_the_link_lets_its_holder_in_as_the_one_user(store, token_asked):
    at = page("train", {"token": server_token()})
    assert not at.exception, [e.value for e in at.exception]
    assert not _shows_only_the_instructions(at)
    assert at.title[0].value.endswith("Train")
    assert at.session_state["_person"].admin
    assert "token" not in at.query_params, "the token leaves the address bar once used"


def test_the_token_makes_its_holder_admin_of_a_password_server(store, token_asked, monkeypatch):
    monkeypatch.setenv("STUDIO_PASSWORD", "class pw")
    run_id = store.create_run(TrainConfig(network="mlp", epochs=1), name="a student's", status="queued",
                              exclusive=False, submitter="Student")
    at = page("runs", {"token": server_token()})
    give_name(at, "Teacher")
    at.switch_page("app_pages/runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    who = at.session_state["_person"]
    assert who.admin and who.name == "Teacher"
    assert any("Admin of this server" in c.value for c in at.sidebar.caption)
    run = store.get(run_id)
    assert who.may("cancel", run) and who.may("delete", run), "the admin cleans up anyone's runs"
    assert not person("Student 2").may("cancel", run)


def test_the_single_user_opt_out_lets_a_loopback_browser_in(store, monkeypatch):
    monkeypatch.setenv("STUDIO_OPEN", "1")
    at = page("train")
    assert at.title[0].value.endswith("Train") and not _shows_only_the_instructions(at)


def test_the_admit_route_swaps_the_token_for_an_admin_cookie(store, token_asked):
    with warnings.catch_warnings():  # Starlette's TestClient on httpx (not httpx2) says it is deprecated
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from ui.admit_route import ADMIT_PATH, routes
    client = TestClient(Starlette(routes=routes()), follow_redirects=False)
    wrong = client.get(ADMIT_PATH, params={"token": "guess", "next": "/train"})
    assert wrong.status_code == 403 and "set-cookie" not in wrong.headers and "printed" in wrong.text
    answer = client.get(ADMIT_PATH, params={"token": server_token(), "next": "/train"})
    assert answer.status_code == 303 and answer.headers["location"] == "/train"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(PASS_COOKIE + "=") and "HttpOnly" in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    assert read_pass(signing_key(store.server_secret(), None), value, "cookie").role == ADMIN


def test_token_comparison_refuses_what_is_not_the_token():
    for junk in (None, "", "é", server_token() + "x", " " + server_token()):
        assert not token_matches(junk)
    assert token_matches(server_token())


def test_a_class_link_viewer_gives_no_name_and_sees_no_server_path(store, monkeypatch):
    from core.app.passes import class_token
    monkeypatch.setenv("STUDIO_PASSWORD", "class pw")
    link = class_token(signing_key(store.server_secret(), "class pw"))
    at = page("data", {"class": link})
    assert not at.exception, [e.value for e in at.exception]
    assert not any(i.label == "Your name" for i in at.text_input), "no name asked"
    who = at.session_state["_person"]
    assert who.viewer and who.name.startswith("student-") and not who.admin
    shown = " ".join(c.value for c in at.caption) + " ".join(c.value for c in at.sidebar.caption)
    assert str(store.root) not in shown and "data/mnist" not in shown
    assert store.claim_name(who.name, "another browser's token"), "the viewer's name is reserved for nobody"


def test_a_viewer_may_not_take_a_runs_checkpoint_or_records_out(with_run, monkeypatch):
    from core.app.passes import class_token
    store, run_id = with_run
    monkeypatch.setenv("STUDIO_PASSWORD", "class pw")
    link = class_token(signing_key(store.server_secret(), "class pw"))
    at = page("runs", {"class": link})
    assert not at.exception, [e.value for e in at.exception]
    assert any("owner or an admin may take" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "records_run_prepare"], "no records to prepare"
    monkeypatch.setenv("STUDIO_OPEN", "1")
    monkeypatch.delenv("STUDIO_PASSWORD")
    owner = page("runs")  # the local server's one person: everything is theirs
    assert [b for b in owner.button if b.key == "records_run_prepare"]
