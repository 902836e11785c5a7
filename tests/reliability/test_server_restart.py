"""The app server is killed and started again while a run trains (real `streamlit run`, real Chromium):
the worker survives and the new server shows it live, stops it without leaving a process behind, and
resumes it from its checkpoint."""
from __future__ import annotations

import re

import pytest

from core.runs.processes import pid_alive
from core.runs.store import RunStore
from tests.support.helpers import settle, wait_for
from tests.support.server import launch_chromium, require_chromium, start_server

require_chromium(pytest)

from playwright.sync_api import expect, sync_playwright  # noqa: E402


def step_shown(page) -> int:
    m = re.search(r"step (\d+)/\d+", page.locator("body").inner_text())
    return int(m.group(1)) if m else -1


def test_a_run_survives_a_server_restart_and_is_stopped_and_resumed_from_the_new_one(tmp_path):
    store_dir = tmp_path / "store"
    store = RunStore(store_dir)
    first = start_server(store_dir)
    second = None
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(first.url + "/configure?network=mlp&mode=pynative&epochs=40&batch_size=32")
            expect(page.get_by_text("Configuration is valid")).to_be_visible(timeout=60_000)
            page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text="Train").first.click()
            # on Train, as a person clicks it: Configure has a Start button too, and a click on it as the page
            # changes lands on a page that is going away
            expect(page.get_by_text("No runs yet")).to_be_visible(timeout=60_000)
            settle(page)
            page.get_by_role("button", name="Start training").click()
            run = wait_for(lambda: (rs := store.list_runs()) and rs[0].pid and rs[0].step > 5 and rs[0],
                           timeout=90, what="the run to train")

            first.stop(kill=True)  # SIGKILL: the server gets no chance to clean up
            assert pid_alive(run.pid), "the worker must outlive the server"
            second = start_server(store_dir)
            page.goto(second.url + "/train")
            expect(page.locator("text=/— running/").first).to_be_visible(timeout=60_000)
            before = step_shown(page)
            page.wait_for_function(f"() => {{ const m = document.body.innerText.match(/step (\\d+)\\//);"
                                   f" return m && +m[1] > {before}; }}", timeout=60_000)
            assert store.get(run.id).status == "running" and store.get(run.id).pid == run.pid

            wait_for(lambda: store.get(run.id).checkpoint, timeout=90, what="a checkpoint")
            settle(page)  # a click while the page still runs its script can be lost (docs/testing.md)
            page.get_by_role("button", name="⏹️ Stop").click()
            expect(page.get_by_text("Stopped:").first).to_be_visible(timeout=60_000)
            wait_for(lambda: not pid_alive(run.pid), timeout=20, what="the worker to exit")

            settle(page)  # a click on a page still re-running after the stop can be dropped
            page.get_by_role("button", name="Resume from checkpoint").click()
            expect(page.locator("text=/— running/").first).to_be_visible(timeout=60_000)
            resumed = wait_for(lambda: (r := store.get(run.id)).pid and r.pid != run.pid and r, timeout=30,
                               what="a new worker")
            settle(page)
            page.get_by_role("button", name="⏹️ Stop").click()
            expect(page.get_by_text("Stopped:").first).to_be_visible(timeout=60_000)
            wait_for(lambda: not pid_alive(resumed.pid), timeout=20, what="the resumed worker to exit")
            browser.close()
        assert "Traceback" not in second.log(), second.log()[-3000:]
    finally:
        for srv in (first, second):
            if srv is not None:
                srv.stop()
