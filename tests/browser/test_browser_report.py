"""The HTML report opened as its reader would: a file on disk in Chromium (file://), every network request
refused, and still its charts draw, its hover answers and its mistakes' images show."""
import pytest

from core.runs.store import RunStore
from tests.support.helpers import cli
from tests.support.server import launch_chromium, require_chromium
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


def test_a_report_of_one_run_and_a_comparison_open_offline_from_file(tmp_path, small_mnist):
    root = tmp_path / "store"
    for name, hidden in (("first", "32"), ("second", "16")):
        p = cli("core.cli.train", "--network", "mlp", "--hidden", hidden, "--epochs", "2", "--data-dir",
                str(small_mnist), "--name", name, "--store", str(root), timeout=600)
        assert p.returncode == 0, p.stderr
    newest, older = RunStore(root).list_runs()
    one, both = tmp_path / "reports" / "one.html", tmp_path / "reports" / "both.html"
    p = cli("core.cli.export_run", newest.id, "--format", "html", "--out", str(one), "--data-dir", str(small_mnist),
            "--store", str(root), timeout=600)
    assert p.returncode == 0, p.stderr
    p = cli("core.cli.export_run", newest.id, older.id, "--format", "html", "--out", str(both), "--store", str(root))
    assert p.returncode == 0, p.stderr
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        context = browser.new_context(viewport={"width": 1300, "height": 900})
        asked = []
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else (asked.append(route.request.url), route.abort()))
        context.set_offline(True)
        page = context.new_page()
        page.goto(one.as_uri())
        expect(page.get_by_role("heading", name="Run second")).to_be_visible()
        expect(page.locator("#curves .main-svg").first).to_be_visible()
        expect(page.locator("#confusion .main-svg").first).to_be_visible()
        expect(page.get_by_role("heading", name="Evaluation on the test split")).to_be_visible()
        images = page.locator(".mistakes img")
        assert images.count() > 0
        assert images.first.evaluate("img => img.complete && img.naturalWidth === 28")
        plot = page.locator("#curves .nsewdrag").first.bounding_box()  # the step-loss chart
        page.mouse.move(plot["x"] + plot["width"] / 2, plot["y"] + plot["height"] / 2)
        expect(page.locator("#curves .hoverlayer .legend").first).to_contain_text("step loss")  # unified hover
        shot(page, "report-1-one-run-offline")
        page.goto(both.as_uri())
        expect(page.get_by_role("heading", name="Comparison of second, first")).to_be_visible()
        expect(page.locator("#curves .main-svg").first).to_be_visible()
        assert page.locator("#curves .scatterlayer .trace").count() >= 2 * 4  # two runs' step, smoothed, epoch curves
        # the one setting that differs, in the Configure page's words
        assert page.locator("tr.differs").all_inner_texts() == ["Hidden layers (units per layer)\t16\t32"]
        shot(page, "report-2-comparison-offline")
        browser.close()
    assert asked == [], f"the report asked the network for {asked}"
