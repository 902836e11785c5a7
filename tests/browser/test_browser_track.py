"""Scripts of their own, live in a real browser: the tutorial-style MLP loop (examples/mlp_value_and_grad.py,
track_run) and the tutorial's LeNet-5 with Model.train (examples/lenet5_model_train.py, StudioCallback) each train
in their own process while the Train page shows their steps coming in, says the run is a script's, and its Stop
button ends the script's training."""
import re
import subprocess
import sys

import pytest

from core import PROJECT_ROOT
from core.runs.store import RunStore
from core.runs.rows import Request
from tests.support.helpers import settle, wait_for
from tests.support.server import launch_chromium, require_chromium, start_server
from tests.browser.test_browser import SHOTS, shot

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


def steps_shown(page) -> int:
    found = re.search(r"step (\d+)/", page.get_by_text(re.compile(r"epoch \d+/\d+ · step")).first.inner_text())
    return int(found.group(1)) if found else 0


@pytest.mark.parametrize("example", ["mlp_value_and_grad.py", "lenet5_model_train.py"])
def test_a_tracked_scripts_run_shows_live_on_train_and_the_pages_stop_ends_it(tmp_path, small_mnist, example):
    root = tmp_path / "store"
    server = start_server(root)
    script = subprocess.Popen([sys.executable, str(PROJECT_ROOT / "examples" / example),
                               "--data", str(small_mnist / "train"), "--store", str(root), "--epochs", "200",
                               "--name", "my notebook loop"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        store = RunStore(root)
        wait_for(lambda: any(r.step for r in store.list_runs()), timeout=120, what="the script's first steps")
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.goto(server.url + "/train")
            expect(page.get_by_text("my notebook loop — running")).to_be_visible()
            expect(page.get_by_text("A script of its own records this run")).to_be_visible()
            first = wait_for(lambda: steps_shown(page), timeout=30, what="a step on the page")
            wait_for(lambda: steps_shown(page) > first, timeout=30, what="the page's steps to move on")
            expect(page.locator(".js-plotly-plot").first).to_be_visible()
            shot(page, f"track-1-{example[:-3]}-live-on-train")
            # Clicked once the page has shown its last run: in a loaded CI a click made during a whole-page run
            # never reached the store (the run's request stayed "run" for 120 s).
            settle(page)
            page.get_by_role("button", name="Stop").first.click()
            (run,) = store.list_runs()
            wait_for(lambda: store.get(run.id).request == Request.STOP or not store.get(run.id).active, timeout=60,
                     what="the page's Stop in the store")
            out, _ = script.communicate(timeout=120)
            assert script.returncode == 0, out
            expect(page.get_by_text("my notebook loop — stopped")).to_be_visible()
            shot(page, f"track-2-{example[:-3]}-stopped-from-the-page")
            browser.close()
        (run,) = store.list_runs()
        assert run.status == "stopped" and run.external and "stopped by request" in run.message
    finally:
        script.kill()
        server.stop()
