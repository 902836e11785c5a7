"""The queue in real browsers: two app servers on one run store (each with its dispatcher), two people press
Start at the same moment, one on each; both runs queue and complete, each started once, and the second's
place in the queue is shown while it waits. On SQLite the two servers share the store's folder (one host); on
PostgreSQL each has a folder of its own, as two hosts would."""
import re

import pytest

from core.runs.store import RunStore
from tests.support.helpers import nav, open_expander, settle, wait_for
from tests.support.server import launch_chromium, require_chromium, start_server
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

LINK = "/configure?network=mlp&hidden=32&epochs=2"
BOTH_DATABASES = True  # the test that takes `database` runs on SQLite and on a real PostgreSQL


def test_two_people_press_start_at_once_on_two_servers_of_one_store_and_both_runs_complete(tmp_path, database):
    root = tmp_path / "store"
    folders = [root, root] if database is None else [tmp_path / "host-a", tmp_path / "host-b"]
    servers = [start_server(folder) for folder in folders]  # $STUDIO_DATABASE_URL: the database fixture's
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            pages = [browser.new_context(viewport={"width": 1400, "height": 1000}).new_page() for _ in servers]
            for page, server in zip(pages, servers, strict=False):
                page.goto(server.url + LINK)
                expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
                nav(page, "Train")
                expect(page.get_by_role("button", name="Start training")).to_be_enabled(timeout=30_000)
            buttons = [page.get_by_role("button", name="Start training") for page in pages]
            for b in buttons:  # as near the same moment as two people manage
                b.click(no_wait_after=True)
            store = RunStore(root, database)
            wait_for(lambda: len(store.list_runs()) == 2, timeout=30, what="both runs")
            # the second run's place, shown while the first trains (on the page of whoever pressed second)
            waiting = wait_for(lambda: next((pg for pg in pages if pg.get_by_text("Queue: 1 run waiting").count()),
                                            None), timeout=15, what="the queue on a page")
            expect(waiting.get_by_text("queued by dashboard").first).to_be_visible()
            shot(waiting, "queue-1-second-run-waiting")
            wait_for(lambda: all(r.status == "completed" for r in store.list_runs()), timeout=240,
                     what="both runs to complete")
            browser.close()
        runs = store.list_runs()
        for run in runs:
            taken = [line for line in store.logs(run.id, limit=500) if "taken from the queue" in line.message]
            assert len(taken) == 1, f"{run.name} was started {len(taken)} times"
        first, second = sorted(runs, key=lambda r: r.started)
        assert second.started >= first.finished - 0.5, "one slot: one after the other"
    finally:
        for s in servers:
            s.stop()


def test_a_sweep_configured_in_the_browser_runs_and_shows_linked_parallel_coordinates_and_seed_bands(tmp_path):
    """Four MLP settings (1 epoch, 2 seeds each) configured on Configure's Sweep section (the learning rate
    only: batch size taken out of the defaults); the Sweeps page shows them finished, accuracy against the
    rate with the seeds' spread, the curves' seed spread as error bars (1 epoch: a band would be
    a blot), and a range that takes one setting out."""
    srv = start_server(tmp_path / "store")
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(srv.url + "/configure?network=mlp&hidden=32&epochs=1")
            expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
            open_expander(page, "Sweep: try several settings")
            page.get_by_role("button", name=re.compile("Remove.*Batch size|Batch size.*remove", re.I)).first.click()
            expect(page.get_by_role("textbox", name="Values of Batch size")).to_have_count(0)
            values = page.get_by_role("textbox", name="Values of Learning rate")
            values.fill("0.1,0.05,0.02,0.01")
            values.press("Enter")
            seeds = page.get_by_role("spinbutton", name="Seeds per setting")
            seeds.fill("2")
            seeds.press("Enter")
            page.wait_for_timeout(1000)
            page.get_by_role("button", name="🔍 Start sweep").click()
            expect(page.get_by_role("heading", name="Sweeps")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("4 of 4 settings done (seeds each: 2)")).to_be_visible(timeout=300_000)
            # a rerun may still show the caption it replaces for a moment: two of it, the same words
            expect(page.get_by_text("Curves of 4 of 4 settings").first).to_be_visible(timeout=30_000)
            by_rate = page.locator('[data-testid="stPlotlyChart"]').first.locator(".js-plotly-plot")
            # Each read in one evaluation, of a chart drawn: a rerun may replace the chart between two reads, and
            # a chart just replaced has no data and layout until Plotly draws it (seen in a clean-clone CI).
            axis = wait_for(lambda: by_rate.evaluate(
                "p => p.data && p.layout && p.data[0].error_y && p.data[0].error_y.array.length === 4"
                " ? String(p.layout.xaxis && p.layout.xaxis.type) : null"), timeout=30,
                what="each rate's accuracy with its seeds' spread")
            assert axis != "log", "0.01–0.1 is one decade: a linear axis"
            curves = page.locator('[data-testid="stPlotlyChart"]').nth(1).locator(".js-plotly-plot")
            wait_for(lambda: curves.evaluate(
                "p => p.data ? p.data.filter(t => t.error_y && t.error_y.array).length : 0") >= 4, timeout=30,
                what="a 1-epoch setting's seeds as a point with error bars")
            shot(page, "sweep-1-finished")
            low = page.locator('[data-testid="stSlider"]').first.get_by_role("slider").first
            narrow_by_one_step(page, low)  # the lowest learning rate, 0.01, is now outside the range
            expect(page.get_by_text("Curves of 3 of 4 settings").first).to_be_visible(timeout=30_000)
            shot(page, "sweep-2-range-chosen")
            browser.close()
        runs = RunStore(tmp_path / "store").list_runs()
        assert len(runs) == 8 and {r.status for r in runs} == {"completed"} and {r.source for r in runs} == {"sweep"}
    finally:
        srv.stop()


def narrow_by_one_step(page, thumb) -> None:
    """ArrowRight on a range slider's thumb, pressed again (three times at most) while the thumb is back where
    it was: a key pressed while the page's poll reruns it can be lost."""
    def value() -> str:  # what the thumb shows (Streamlit's slider thumbs carry aria-valuetext, or their text)
        return thumb.get_attribute("aria-valuetext") or thumb.inner_text()
    before = value()
    assert before, "the thumb shows its value"
    for _ in range(3):
        settle(page)
        if value() != before:
            return
        thumb.focus()
        thumb.press("ArrowRight")
        try:
            wait_for(lambda: value() != before, 10, "the slider's thumb to move")
            settle(page)
            if value() != before:  # and not put back by a rerun
                return
        except AssertionError:
            continue
    assert value() != before, "three presses of ArrowRight and the thumb stayed"


def test_a_sweep_started_with_configures_defaults_completes_and_shows_importance_and_log_axes(tmp_path):
    """Configure's sweep section as it opens on a small MLP — a grid of learning rate (0.001, 0.01, 0.1) × batch
    size (64, 128), one seed — started as it is: it completes, and the Sweeps page names settings by their
    values, shows which setting mattered most (Optuna's parameter importance) and the decade-spaced rates on a
    log axis, with the colour bar in percent."""
    srv = start_server(tmp_path / "store")
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(srv.url + "/configure?network=mlp&hidden=32&epochs=1")
            expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
            open_expander(page, "Sweep: try several settings")
            # as a person presses Start once the page has settled: a click while Configure still ran its script
            # was lost now and then (CI and here)
            expect(page.get_by_text("0: every combination of the values.")).to_be_visible(timeout=60_000)
            settle(page)
            page.get_by_role("button", name="🔍 Start sweep").click()
            expect(page.get_by_role("heading", name="Sweeps")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("6 of 6 settings done (seeds each: 1)")).to_be_visible(timeout=400_000)
            importance = page.get_by_role("heading", name="Which setting mattered most")
            expect(importance.first).to_be_visible(timeout=60_000)
            # the page's last live update and its final draw overlap a moment: then one heading
            wait_for(lambda: importance.count() == 1, what="one importance chart", timeout=30)
            plots = page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot')
            parcoords = plots.first
            first_trace = "p => (p.data && p.data[0]) || null"  # null until Plotly has drawn the chart
            wait_for(lambda: (parcoords.evaluate(first_trace) or {}).get("type") == "parcoords", what="the parcoords",
                     timeout=30)
            # read once drawn: the page's final draw can replace the chart between two reads (seen in a clean run)
            drawn = "p => (p.data && p.data[0] && p.data[0].dimensions) ? p.data[0] : null"
            trace = wait_for(lambda: parcoords.evaluate(drawn), what="the parcoords' axes", timeout=30)
            rate = trace["dimensions"][0]
            assert rate["label"] == "Learning rate (log)" and rate["ticktext"] == ["0.001", "0.01", "0.1"], rate
            line = trace["line"]  # the accuracy's colours over the trials' own range, within 0-100 %
            assert line["colorbar"]["tickformat"] == ".1%" and 0 <= line["cmin"] < line["cmax"] <= 1, line
            bars = wait_for(lambda: plots.last.evaluate(first_trace), what="the importance bars", timeout=30)
            assert bars["type"] == "bar" and set(bars["y"]) == {"Learning rate", "Batch size"}, bars
            assert page.get_by_text(re.compile(r"#\d")).count() == 0, "settings named by their values"
            chooser = page.get_by_role("combobox", name="Sweep", exact=True)
            expect(chooser).to_have_value(re.compile(r"\(done\)$"), timeout=60_000)  # its status, once finished
            started_by = page.get_by_text("started by this computer's user")
            expect(started_by.first).to_be_visible()
            wait_for(lambda: started_by.count() == 1, what="one sweep caption", timeout=30)  # as the heading above
            shot(page, "sweep-3-defaults-importance")
            browser.close()
        runs = RunStore(tmp_path / "store").list_runs()
        assert len(runs) == 6 and {r.status for r in runs} == {"completed"}
    finally:
        srv.stop()
