"""The third network as a person meets it: chosen on Configure in Chromium, drawn as a picture with its layer
table, trained from the Start button to its end, then read on Draw's canvas."""
import re

import pytest

from core.runs.store import RunStore
from tests.browser.test_browser import SHOTS, shot
from tests.support.canvas import SEVEN, stroke
from tests.support.helpers import wait_for
from tests.support.server import launch_chromium, require_chromium, start_server

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


def test_resnet_is_chosen_drawn_trained_and_read_in_the_browser(tmp_path):
    root = tmp_path / "store"
    server = start_server(root)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(server.url + "/configure?epochs=2&learning_rate=0.05")
            network = page.get_by_role("combobox", name="Network")
            network.click()
            page.get_by_role("option", name=re.compile("ResNet-8")).click()
            expect(network).to_have_value(re.compile("ResNet-8"), timeout=30_000)
            expect(page.get_by_role("heading", name="ResNet-8 layers")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("ResidualBlock", exact=True).first).to_be_attached()  # the layer table (a canvas grid)
            expect(page.get_by_text("block 32@7×7").first).to_be_visible()  # the picture's columns
            expect(page.locator("svg.network-picture circle")).to_have_count(7 * 8)  # 7 columns of 8 dots
            assert page.locator('[data-testid="stPlotlyChart"]').count() == 0, "Configure loads no Plotly"
            assert "network=resnet" in page.url
            assert page.get_by_role("button", name="−").count() == 0, "ResNet-8 has no MLP shape buttons"
            shot(page, "network-1-resnet-configure")
            page.get_by_role("button", name="Start training").first.click()
            expect(page).to_have_url(re.compile(r"/train"), timeout=60_000)
            store = RunStore(root)
            run = wait_for(lambda: next(iter(store.list_runs()), None), 60, "the run")
            assert (run.config.network, run.config.epochs, run.config.learning_rate) == ("resnet", 2, 0.05)
            expect(page.locator("text=/— completed/").first).to_be_visible(timeout=300_000)
            assert store.get(run.id).best_val_acc > 0.5
            shot(page, "network-2-resnet-trained")
            page.goto(server.url + "/draw")
            expect(page.get_by_role("combobox", name="Model")).to_have_value(re.compile(re.escape(run.name)),
                                                                            timeout=60_000)
            stroke(page, SEVEN)
            expect(page.get_by_text("Prediction:")).to_be_visible(timeout=60_000)
            shot(page, "network-3-resnet-draw")
            browser.close()
    finally:
        server.stop()
