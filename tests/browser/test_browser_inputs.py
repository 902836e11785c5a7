"""What a mischievous link or run name can do, in a real browser: nothing. User-supplied text is shown
literally (no live links, no remote images fetched), long values are cut, and every page opens by its URL."""
import time

import pytest

from core.config import TrainConfig
from core.runs.store import RunStore
from tests.support.server import launch_chromium, require_chromium, start_server
from tests.support.helpers import let_pass

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

EVIL = "http://127.0.0.1:9"  # nothing listens there; a request to it would mean the page followed the bait
NAME = f"**bold** [verify your account]({EVIL}) ![]({EVIL}/p) <b>"  # 80 characters: the most a run's name has


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store_dir = tmp_path_factory.mktemp("inputs-store")
    store = RunStore(store_dir)
    run_id = store.create_run(TrainConfig(network="mlp"), name=NAME, source="cli")
    store.update(run_id, status="running", heartbeat=time.time())  # live: the sidebar shows its name too
    srv = start_server(store_dir)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        yield srv.url, browser
        browser.close()
    srv.stop()


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    bait = []
    page.on("request", lambda r: bait.append(r.url) if r.url.startswith(EVIL) else None)
    page.goto(url)
    return page, bait


def assert_no_bait(page, bait):
    assert page.locator(f'a[href^="{EVIL}"]').count() == 0
    assert page.locator(f'img[src^="{EVIL}"]').count() == 0
    assert bait == []


def test_link_parameters_are_shown_literally_and_cut(app):
    url, browser = app
    page, bait = open_page(browser, url + f"/configure?bar=[Click to verify account]({EVIL}/phish)"
                                          f"&baz=![i]({EVIL}/pixel.png)&lang=[x]({EVIL}/lang)" + "y" * 10_000)
    expect(page.get_by_text("[Click to verify account]").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("![i]").first).to_be_visible()
    let_pass(1.0, "time for any image the page would fetch")
    assert_no_bait(page, bait)
    warnings = page.locator('[data-testid="stAlert"]').all_inner_texts()
    assert warnings and max(len(w) for w in warnings) < 600  # the 10,000-character value is cut


def test_run_names_are_shown_literally_in_the_heading_and_the_sidebar(app):
    url, browser = app
    page, bait = open_page(browser, url + "/train")
    expect(page.get_by_role("heading", name="**bold** [verify your account]").first).to_be_visible(timeout=60_000)
    page, bait2 = open_page(browser, url + "/runs")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("**bold** [verify your account]")).to_be_visible(
        timeout=60_000)
    let_pass(1.0, "time for any image the page would fetch")
    assert_no_bait(page, bait + bait2)


def test_the_train_page_follows_a_run_started_elsewhere(tmp_path, app):
    """A Train page showing a finished run, and a run that starts in another session (or from the command
    line): without a reload the page switches to it, its sidebar names it, and Start stays (it would queue)."""
    _, browser = app
    store = RunStore(tmp_path / "store")
    old = store.create_run(TrainConfig(network="mlp"), name="yesterday", source="cli")
    store.finish(old, "completed", "done")
    srv = start_server(tmp_path / "store")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(srv.url + "/train")
        expect(page.get_by_role("heading", name="yesterday").first).to_be_visible(timeout=60_000)
        expect(page.get_by_role("button", name="Start training")).to_be_enabled()
        new = store.create_run(TrainConfig(network="mlp"), name="started elsewhere", source="cli")
        store.update(new, status="running", heartbeat=time.time())
        expect(page.get_by_role("heading", name="started elsewhere").first).to_be_visible(timeout=15_000)
        expect(page.get_by_role("button", name="Start training")).to_be_enabled()
        expect(page.locator('[data-testid="stSidebar"]').get_by_text("started elsewhere")).to_be_visible()
        store.finish(new, "stopped", "test over")
    finally:
        srv.stop()
