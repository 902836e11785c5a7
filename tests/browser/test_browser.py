"""A real browser (Debian's Chromium driven by Playwright) against `streamlit run app.py` on 127.0.0.1:
train a short run live, reload mid-run, see it from a second browser, evaluate, draw a 7 and read it."""
import os
from pathlib import Path

import pytest

from core import PROJECT_ROOT
from tests.support.canvas import SEVEN, ink, stroke
from tests.support.server import launch_chromium, require_chromium, start_server
from tests.support.helpers import let_pass, nav, scroll_to, switch_on, wait_for

# Screenshots go to an ignored folder, so that the tests leave the work tree as they found it;
# scripts/refresh_screenshots.sh points this at docs/screenshots to refresh the docs' pictures.
SHOTS = Path(os.environ.get("STUDIO_SCREENSHOTS") or PROJECT_ROOT / "test-output" / "screenshots")
require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start_server(tmp_path_factory.mktemp("browser-store"))
    yield srv.url
    srv.stop()
    print(srv.log()[-3000:])


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def tick_labels(chart, axis: str) -> list[str]:
    """The distinct tick labels a Plotly chart shows on one axis ("xtick" or "ytick"), in numeric order."""
    texts = chart.locator(f".{axis} text").evaluate_all("els => els.map(e => e.textContent)")
    return sorted(set(texts), key=lambda s: float(s) if s.replace(".", "", 1).isdigit() else s)


def shot(page, name: str):
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_a_deep_link_that_is_a_fresh_servers_first_request_opens_inside_the_frame(tmp_path, browser):
    """Streamlit runs a script of a pages/ folder on its own for such a request; ours are in app_pages/, so
    st.navigation routes it and the page gets the frame: the sidebar's links, status and language switch."""
    fresh = start_server(tmp_path / "store")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(fresh.url + "/runs?lang=zh")
        expect(page.get_by_role("heading", name="运行记录")).to_be_visible(timeout=60_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar.locator('[data-testid="stPageLink"]')).to_have_count(9)
        expect(sidebar.get_by_text("没有正在训练的运行")).to_be_visible()
        assert "Page not found" not in page.inner_text("body")
        nav(page, "训练")
        expect(page.get_by_role("button", name="开始训练")).to_be_visible(timeout=30_000)
        for url in ("/train", "/evaluate", "/"):  # every page by its own URL; the root opens Train at /train
            page.goto(fresh.url + url)
            expect(page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]')).to_have_count(9)
            let_pass(0.5, "time for a 'Page not found' to show")
            assert "Page not found" not in page.inner_text("body"), url
        expect(page.get_by_role("button", name="Start training")).to_be_visible(timeout=30_000)
        assert page.url.endswith("/train")
    finally:
        fresh.stop()


def test_train_live_reload_second_browser_evaluate_and_draw(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    # In slow motion (0.05 s before each of its 213 steps): at full speed 3 epochs ended in ~3 s on an AVX-512
    # CPU, before the reload below could find the run live.
    page.goto(server + "/configure?epochs=3&delay=0.05")
    expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
    shot(page, "1-configure")

    nav(page, "Train")
    page.get_by_role("button", name="Start training").click()
    expect(page.get_by_text("step loss").first).to_be_visible(timeout=60_000)
    expect(page.locator("text=/running|compiling/i").first).to_be_visible(timeout=30_000)
    page.wait_for_function("() => document.body.innerText.match(/step [1-9][0-9]*\\/213/)", timeout=60_000)
    shot(page, "2-training-live")

    page.reload()  # a new session: the run must still be there, live
    expect(page.locator("text=/— (running|paused)/").first).to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    shot(page, "3-after-reload")

    expect(page.locator("text=/Finished \\d+ epochs?/").first).to_be_visible(timeout=180_000)
    expect(page.locator(".js-plotly-plot .scatterlayer .trace").first).to_be_attached()
    shot(page, "4-finished")

    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()  # a teammate
    other.goto(server)
    expect(other.locator("text=/Finished \\d+ epochs?/").first).to_be_visible(timeout=60_000)
    expect(other.get_by_text("— completed").first).to_be_visible()
    other.close()

    nav(page, "Evaluate")
    expect(page.get_by_text("misclassified").first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Most confident mistakes")).to_be_visible()
    shot(page, "5-evaluate")
    page.set_viewport_size({"width": 933, "height": 1000})  # what 1400 px at 150 % zoom leaves
    confusion = page.locator(".js-plotly-plot").first
    for axis in ("xtick", "ytick"):  # every digit labelled, not only 0, 2, 4 ..., once redrawn for the new width
        wait_for(lambda axis=axis: tick_labels(confusion, axis) == [str(d) for d in range(10)], 10, f"all ten {axis} labels")
    page.set_viewport_size({"width": 1400, "height": 1000})

    nav(page, "Draw & predict")
    canvas = page.locator("canvas.upper-canvas").first  # 0.13 renders in the page (no iframe)
    expect(canvas).to_be_visible(timeout=60_000)
    expect(page.get_by_text("canvas is empty")).to_be_visible(timeout=30_000)
    stroke(page, SEVEN)
    expect(page.get_by_text("Prediction:")).to_be_visible(timeout=60_000)
    text = page.get_by_text("Prediction:").inner_text()
    shot(page, "6-draw-7")
    assert "Prediction: 7" in text, text
    assert tick_labels(page.locator(".js-plotly-plot").first, "xtick") == [str(d) for d in range(10)]  # all ten
    expect(page.locator(".js-plotly-plot").first).to_be_visible()

    switch_on(page, "🔬 Inside the network")  # the toggle under the prediction
    expect(page.get_by_text("saliency (red) on the input").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("First-layer filters").first).to_be_visible()
    shot(page, "7-inside-the-network")

    # Clear, then draw at once (no drawing may be lost): the canvas clears itself in the browser, so the stroke
    # that follows cannot be wiped by a rerun that replaces the canvas.
    scroll_to(canvas)
    drawn_on = canvas.element_handle()
    page.get_by_role("button", name="Reset canvas & history").click()
    stroke(page, SEVEN)
    let_pass(3.0, "time for a rerun that would replace the canvas")
    assert drawn_on.evaluate("e => e.isConnected")  # the same canvas: clearing did not replace it
    drawn = ink(page)
    assert drawn > 500, drawn
    expect(page.get_by_text("Prediction: 7")).to_be_visible(timeout=30_000)
    switch_on(page, "Read each view with its four 1-pixel shifts too")  # ten readings of the drawing, averaged
    expect(page.get_by_text("each also moved one pixel up, down, left and right")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Prediction: 7")).to_be_visible(timeout=30_000)

    page.goto(server + "/configure?epochs=3&delay=0")  # a second run with the same settings, at full speed
    expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
    nav(page, "Train")
    page.get_by_role("button", name="Start training").click()
    expect(page.locator("text=/— running/").first).to_be_visible(timeout=60_000)
    expect(page.locator("text=/Finished \\d+ epochs?/").first).to_be_visible(timeout=180_000)
    nav(page, "Compare")
    expect(page.get_by_text("Settings that differ are highlighted: none").first).to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)  # the parallel coordinates wait to be asked for
    switch_on(page, "Show the chart")
    expect(page.locator(".js-plotly-plot").nth(1)).to_be_visible(timeout=30_000)  # + parallel coordinates
    shot(page, "8-compare")

    nav(page, "Weights")  # the newest run's weights and gradients, played back epoch by epoch
    expect(page.get_by_text("No dead or exploding layer").first).to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").nth(1)).to_be_visible(timeout=30_000)
    expect(page.locator("text.slider-label", has_text="epoch").first).to_have_text("epoch 0")
    page.locator(".updatemenu-button", has_text="Play").first.click()
    expect(page.locator("text.slider-label", has_text="epoch").first).to_have_text("epoch 3", timeout=15_000)
    scroll_to(page.locator(".js-plotly-plot").nth(1))
    page.screenshot(path=str(SHOTS / "9-weights-over-time.png"))

    # Two data-parallel workers (msrun), configured by link, watched live, each worker's state listed.
    page.goto(server + "/configure?epochs=2&network=mlp&workers=2")
    expect(page.get_by_text("Global batch 64 = 2 workers × 32").first).to_be_visible(timeout=60_000)
    nav(page, "Train")
    page.get_by_role("button", name="Start training").click()
    expect(page.get_by_text("2 data-parallel processes").first).to_be_visible(timeout=60_000)
    expect(page.locator("text=/Finished \\d+ epochs?/").first).to_be_visible(timeout=180_000)
    table = page.locator('[data-testid="stDataFrame"]').first
    expect(table).to_be_visible(timeout=30_000)
    scroll_to(table)
    page.screenshot(path=str(SHOTS / "10-two-workers.png"))

    # The sidebar's language switch: the whole UI in Simplified Chinese, remembered in the URL across pages
    # and a reload.
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').last.click()
    page.get_by_role("option", name="简体中文").click()
    expect(page.get_by_role("button", name="开始训练")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("2 个数据并行进程").first).to_be_visible()
    assert "lang=zh" in page.url, page.url
    nav(page, "权重")
    expect(page.get_by_text("没有死亡或爆炸的层").first).to_be_visible(timeout=30_000)
    assert "lang=zh" in page.url, page.url
    page.reload()
    expect(page.get_by_text("没有死亡或爆炸的层").first).to_be_visible(timeout=60_000)
    nav(page, "训练")
    expect(page.get_by_text("已完成").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("训练时间").first).to_be_visible(timeout=30_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    shot(page, "11-chinese")
