"""A MindInsight user's summary folder, opened the way a person would: Runs › Open a summary folder in Chromium,
then the run's loss, last input image and graph by scope on Train, and its histograms on Weights."""
import re

import pytest

from core.runs.store import RunStore
from tests.browser.test_browser import SHOTS, shot
from tests.support.helpers import open_expander, settle, switch_on, wait_for
from tests.support.summaries import collect, half_written
from tests.support.server import launch_chromium, require_chromium, start_server

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


def open_summary_folder(page, url: str, folder, follow: bool = False) -> None:
    """Runs › Open a summary folder, as a person does it: type the folder, switch on following if asked, Open."""
    page.goto(url + "/runs")
    open_expander(page, "Open a summary folder")
    box = page.get_by_role("textbox", name="Summary folder on this server")
    box.fill(str(folder))
    box.press("Enter")
    if follow:
        switch_on(page, "Follow while it trains")
    open_button = page.get_by_test_id("stButton").get_by_role("button", name="Open", exact=True)
    expect(open_button).to_be_enabled(timeout=30_000)  # once the page has the folder typed
    settle(page)  # the rerun of Enter, and the expander's opening, over before the click
    open_button.click()


def test_a_summary_folder_is_opened_from_runs_and_shown_on_train_and_weights(tmp_path, small_mnist):
    summaries = tmp_path / "summaries"
    collect(small_mnist / "train", summaries / "lenet5-collector")
    root = tmp_path / "store"
    server = start_server(root)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            open_summary_folder(page, server.url, summaries)
            expect(page.get_by_text(re.compile(r"lenet5-collector: 20 steps read"))).to_be_visible(timeout=60_000)
            store = RunStore(root)
            (run,) = store.list_runs()
            assert run.imported and run.status == "completed" and len(store.steps(run.id)) == 20
            # its lineage as its settings, under the names the script's MindSpore gave them (the grid's cells)
            for name, value in (("loss_function", "SoftmaxCrossEntropyWithLogits"), ("optimizer", "Momentum"),
                                ("network", "LeNet5"), ("batch_size", "32")):
                row = page.locator("tr", has=page.locator("td", has_text=re.compile(f"^{name}$")))
                expect(row.locator("td", has_text=re.compile(f"^{value}$")).first).to_be_attached(timeout=30_000)
            shot(page, "summary-1-runs-opened")

            page.goto(server.url + "/train")
            expect(page.get_by_text(re.compile("Read from the summary folder"))).to_be_visible(timeout=60_000)
            expect(page.locator("[data-testid='stImage'] img").first).to_be_visible(timeout=30_000)
            assert page.get_by_role("button", name=re.compile("Pause|Stop")).count() == 0
            page.get_by_text(re.compile(r"The graph by name scope \(\d+ operators\)")).click()
            for scope in ("network-WithLossCell", "_backbone-LeNet5", "conv1-Conv2d"):  # a scope opens by a click
                page.locator("summary b", has_text=re.compile(f"^{scope}$")).first.click()
            conv = page.locator("details[data-scope$='_backbone-LeNet5/conv1-Conv2d']").first
            expect(conv.get_by_role("cell", name="Conv2D", exact=True)).to_be_visible(timeout=30_000)
            expect(conv.get_by_role("cell", name="32×6×28×28")).to_be_visible()
            page.locator("summary b", has_text=re.compile("^conv1-Conv2d$")).first.click()  # and closes by one
            expect(conv.get_by_role("cell", name="Conv2D", exact=True)).to_be_hidden()
            shot(page, "summary-2-train")

            page.goto(server.url + "/weights")
            chart = page.locator(".js-plotly-plot").first
            expect(chart).to_be_visible(timeout=60_000)
            expect(chart.get_by_text("conv1.weight").first).to_be_visible()
            shot(page, "summary-3-weights")
            browser.close()
    finally:
        server.stop()


def test_a_folder_followed_from_runs_goes_live_on_train_as_its_files_grow(tmp_path, small_mnist):
    """Follow while it trains: the folder is opened half written; Train shows the run running, and as the rest of
    the records and then the training lineage arrive it shows every step and "completed", with nobody clicking."""
    collect(small_mnist / "train", tmp_path / "written")
    live = tmp_path / "summaries" / "live-training"
    events, lineage = half_written(tmp_path / "written", live)
    root = tmp_path / "store"
    server = start_server(root)
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            open_summary_folder(page, server.url, live, follow=True)
            expect(page.get_by_text(re.compile(r"live-training: \d+ steps read so far; followed"))).to_be_visible(
                timeout=60_000)
            store = RunStore(root)
            (run,) = store.list_runs()
            assert run.status == "running" and 0 < run.step < 20

            page.goto(server.url + "/train")
            expect(page.get_by_role("heading", name=re.compile("live-training — running"))).to_be_visible(
                timeout=60_000)
            (live / events.name).write_bytes(events.read_bytes())
            (live / lineage.name).write_bytes(lineage.read_bytes())
            expect(page.get_by_role("heading", name=re.compile("live-training — completed"))).to_be_visible(
                timeout=60_000)
            wait_for(lambda: len(store.steps(run.id)) == 20, what="every step", timeout=30)
            expect(page.get_by_text(re.compile(r"step 20/20")).first).to_be_visible(timeout=30_000)  # a rerun may show two for a moment
            shot(page, "summary-4-followed")
            browser.close()
    finally:
        server.stop()
