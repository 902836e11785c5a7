"""Sign-in with OpenID Connect end to end: a real provider on 127.0.0.1 (npm's oidc-provider, started here with a
client for the app and its development login form), Streamlit's st.login in Chromium, two users one after the
other. Alice's run is recorded as hers (her e-mail); Bob sees it and its owner but cannot pause or stop it."""
import os
import shutil
import subprocess
import urllib.request

import pytest

from core import PROJECT_ROOT
from core.runs.rows import Request
from core.runs.store import RunStore
from tests.support.helpers import nav, settle, wait_for
from tests.support.server import free_port, launch_chromium, require_chromium, start_server
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

OIDC = PROJECT_ROOT / "tests" / "support" / "oidc"


@pytest.fixture
def provider(tmp_path):
    """The provider on a free port, for an app on another free port; (provider url, app port, secrets file)."""
    if not shutil.which("node") or not (OIDC / "node_modules" / "oidc-provider").exists():
        if os.environ.get("STUDIO_REQUIRE_BROWSER"):
            raise RuntimeError("Node and tests/support/oidc/node_modules are required here: ./test.sh installs them (npm ci)")
        pytest.skip("Node.js or npm's oidc-provider is missing (./test.sh installs it with npm ci); CI runs this test")
    port, app_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    with open(tmp_path / "provider.log", "wb") as log:  # the child keeps its own copy of the file
        proc = subprocess.Popen(["node", str(OIDC / "provider.mjs"), str(port),
                                 f"http://127.0.0.1:{app_port}/oauth2callback"], cwd=OIDC, stdout=log,
                                stderr=subprocess.STDOUT)
    wait_for(lambda: _answers(url + "/.well-known/openid-configuration"), 30, "the OpenID Connect provider")
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(f'''[auth]
redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"
cookie_secret = "{os.urandom(24).hex()}"
client_id = "studio"
client_secret = "studio-test-secret"
server_metadata_url = "{url}/.well-known/openid-configuration"
client_kwargs = {{ prompt = "login" }}
''')
    yield url, app_port, secrets
    proc.terminate()
    proc.wait(10)


def _answers(url: str) -> bool:
    try:
        return urllib.request.urlopen(url, timeout=1).status == 200
    except OSError:
        return False


def sign_in(page, app_url: str, user: str) -> None:
    page.goto(app_url + "/configure?network=mlp&hidden=32&epochs=300")
    settle(page)  # the page's first run over: a click on a button it redraws can be lost
    page.get_by_role("button", name="Sign in").click()
    login = page.locator('input[name="login"]')  # the provider's development login form
    login.fill(user)
    page.locator('input[name="password"]').fill("any")
    page.locator('button[type="submit"]').click()
    expect(login).to_have_count(0, timeout=60_000)  # on its consent step now: not the login form's button again
    page.locator('button[type="submit"]').click()
    expect(page.get_by_text(f"Signed in as {user.capitalize()} Example")).to_be_visible(timeout=60_000)


def test_two_users_sign_in_one_after_the_other_and_each_owns_what_they_start(tmp_path, provider):
    _, app_port, secrets = provider
    root = tmp_path / "store"
    server = start_server(root, port=app_port, extra_env={"STREAMLIT_SECRETS_FILES": str(secrets)})
    SHOTS.mkdir(parents=True, exist_ok=True)
    store = RunStore(root)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            alice = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            alice.goto(server.url + "/train")
            expect(alice.get_by_role("button", name="Sign in")).to_be_visible(timeout=60_000)
            expect(alice.get_by_role("button", name="Start training")).to_have_count(0)  # nothing before sign-in
            sign_in(alice, server.url, "alice")
            nav(alice, "Train")
            alice.get_by_role("button", name="Start training").click()
            wait_for(lambda: any(r.status == "running" for r in store.list_runs()), 120, "Alice's run")
            assert store.list_runs()[0].submitter == "alice@example.com"

            bob = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            sign_in(bob, server.url, "bob")
            nav(bob, "Train")
            expect(bob.get_by_text("owner: alice@example.com").first).to_be_visible(timeout=30_000)
            expect(bob.get_by_role("button", name="⏸️ Pause", exact=True)).to_have_count(0)
            shot(bob, "signin-1-bob-sees-alices-run")
            stop_run(alice, store)
            ended(store, "stopped", 60)
            bob.get_by_role("button", name="Sign out").click()
            bob.get_by_role("button", name="Yes, sign me out").click()  # the provider asks
            expect(bob.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
            browser.close()
        assert "studio-test-secret" not in server.log() and "cookie_secret" not in server.log()
    finally:
        server.stop()
        print(server.log()[-3000:])  # pytest shows it when the test failed


def ended(store: RunStore, status: str, timeout: float) -> None:
    """Wait until the newest run has `status`; else fail saying what the run is and what its log ends with (a CI
    run once timed out here with the stop request in the store)."""
    try:
        wait_for(lambda: store.list_runs()[0].status == status, timeout, f"Alice's run to be {status}")
    except AssertionError:
        run = store.list_runs()[0]
        log = store.log_path(run.id).read_text(errors="replace")[-1500:] if store.log_path(run.id).exists() else ""
        raise AssertionError(f"Alice's run {run.id} is {run.status} (request {run.request}, step {run.step}, "
                             f"epoch {run.epoch}): {run.message}\n{log}") from None


def stop_run(page, store: RunStore) -> None:
    """⏹️ Stop on a live Train view, until the store holds the request (or the run has ended): a click that lands
    while the view redraws can be lost; three at most."""
    def took() -> bool:
        run = store.list_runs()[0]
        return run.request == Request.STOP or not run.active
    for _ in range(3):
        if took():
            return
        page.get_by_role("button", name="⏹️ Stop", exact=True).click()
        try:
            wait_for(took, 10, "Alice's stop request in the store")
            return
        except AssertionError:
            continue
    assert took(), "three clicks on Stop and no stop request in the store"
