"""The open server's access token, from outside as people and scripts reach it (core/app/server_token.py): a
real server started as ./run.sh starts it (no STUDIO_OPEN), a real Chromium, a raw websocket client with and
without an Origin, a real nginx with and without forwarded headers, and another OS user on this host. Only the
link with the token gets in; everything else gets the instructions."""
from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright
from streamlit.proto.BackMsg_pb2 import BackMsg

from tests.support.server import launch_chromium, require_chromium, start_server

require_chromium(pytest)

WS_CLIENT = Path(__file__).resolve().parents[1] / "support" / "ws_client.py"
INSTRUCTIONS = "opens only with its access link"
APP_WORDS = ("Start training",)  # what the Train page draws for whoever is let in (page names are sent to all)


def _page_run_request(page_name: str = "train") -> str:
    msg = BackMsg()
    msg.rerun_script.page_name = page_name
    return msg.SerializeToString().hex()


def _what_a_script_sees(url: str, origin: str | None = None, as_user: str | None = None,
                        python: str = sys.executable, client: Path = WS_CLIENT) -> str:
    ws = url.replace("http://", "ws://") + "/_stcore/stream"
    cmd = [python, str(client), ws, _page_run_request()] + ([origin] if origin else [])
    if as_user:
        cmd = ["runuser", "-u", as_user, "--"] + cmd
    # WS_SECONDS bounds the wait: the client ends once the page run has finished and a moment passed without more
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=dict(os.environ, WS_SECONDS="30"))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _instructions_only(seen: str) -> bool:
    return INSTRUCTIONS in seen and not any(word in seen for word in APP_WORDS)


@pytest.fixture
def token_server(tmp_path):
    token = secrets.token_urlsafe(32)
    server = start_server(tmp_path / "store", token=token)
    yield server, token
    server.stop()
    print(server.log()[-3000:])


def test_a_script_gets_only_the_instructions_with_or_without_an_origin(token_server):
    server, _ = token_server
    port = server.url.rsplit(":", 1)[1]
    for origin in (None, server.url, f"http://localhost:{port}", "http://127.0.0.1:1"):
        seen = _what_a_script_sees(server.url, origin)
        assert seen, f"no answer (origin {origin})"
        if origin == "http://127.0.0.1:1":  # Streamlit refuses a foreign Origin before any page runs
            assert not any(word in seen for word in APP_WORDS)
            continue
        assert _instructions_only(seen), f"origin {origin}: {seen[-500:]}"


def test_behind_a_real_nginx_with_or_without_forwarded_headers_only_the_link_gets_in(token_server, tmp_path):
    from tests.support.nginx import start_nginx, stop_nginx
    server, token = token_server
    proxies = [start_nginx(tmp_path / f"nginx-{kind}", [server.url], forwarded=kind == "forwarded")
               for kind in ("forwarded", "plain")]
    try:
        for _, url in proxies:
            assert _instructions_only(_what_a_script_sees(url)), url
            assert _instructions_only(_what_a_script_sees(url, origin=server.url)), url  # a forged loopback one
        with sync_playwright() as p:
            browser = launch_chromium(p)
            for _, url in proxies:
                page = browser.new_context().new_page()
                page.goto(url + "/train")
                expect(page.get_by_text(INSTRUCTIONS)).to_be_visible(timeout=60_000)
                expect(page.get_by_role("button", name="Start training")).to_have_count(0)
                page.goto(url + f"/studio/admit?token={token}&next=/train")
                expect(page.get_by_role("button", name="Start training")).to_be_visible(timeout=60_000)
            browser.close()
    finally:
        stop_nginx(proxies)


def test_another_os_user_on_this_host_gets_only_the_instructions(token_server, tmp_path):
    if os.geteuid() != 0 or not shutil.which("runuser"):
        if os.environ.get("STUDIO_REQUIRE_REAL_FAULTS"):
            pytest.fail("another OS user needs root and runuser here (CI runs as root)")
        pytest.skip("acting as another OS user needs root (CI runs as root)")
    server, _ = token_server
    other = pwd.getpwnam("nobody").pw_name
    folder = tmp_path / "theirs"
    folder.mkdir()
    folder.chmod(0o755)
    client = folder / "ws_client.py"
    shutil.copyfile(WS_CLIENT, client)
    client.chmod(0o644)
    tmp_path.chmod(0o755)  # the way to their copy of the client (pytest's folders are 0700)
    for parent in tmp_path.parents:
        if parent == Path("/tmp") or parent == Path(tmp_path.anchor):
            break
        parent.chmod(parent.stat().st_mode | 0o005)
    python = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
    seen = _what_a_script_sees(server.url, as_user=other, python=python, client=client)
    assert _instructions_only(seen), seen[-500:]


def test_the_token_link_lets_a_real_browser_in_and_a_reload_keeps_it(token_server, tmp_path):
    server, token = token_server
    assert f"/studio/admit?token={token}" in server.log(), "the server prints its access link at start"
    with sync_playwright() as p:
        browser = launch_chromium(p)
        stranger = browser.new_context().new_page()
        stranger.goto(server.url + "/train")
        expect(stranger.get_by_text(INSTRUCTIONS)).to_be_visible(timeout=60_000)
        expect(stranger.get_by_role("button", name="Start training")).to_have_count(0)
        stranger.goto(server.url + "/studio/admit?token=not-the-token&next=/train")
        expect(stranger.get_by_text("not this server's")).to_be_visible(timeout=30_000)

        owner = browser.new_context().new_page()
        owner.goto(server.url + f"/studio/admit?token={token}&next=/train")
        expect(owner.get_by_role("button", name="Start training")).to_be_visible(timeout=60_000)
        assert token not in owner.url, "the token leaves the address bar"
        owner.reload()
        expect(owner.get_by_role("button", name="Start training")).to_be_visible(timeout=60_000)
        cookies = {c["name"]: c for c in owner.context.cookies()}
        assert cookies["studio_access"]["httpOnly"]
        browser.close()
