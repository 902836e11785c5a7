"""Start → first live step, as a user sees it in a real browser (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.start_latency [--reps 2]

A server on 127.0.0.1 with a fresh run store; for each network, Configure (the page complete) → click "Start
training" → the Train page's progress shows step ≥ 1; runs one after another; on a server with warm workers (the default:
core/runs/warm_pool.py) and on one without, interleaved. Also split, from the store: the click to the
worker's start (process start, imports), the first graph call (compilation included), the training time at
the first step, and from the first step's end (its log line) to the page showing it.
Results: bench/results/start_latency.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.page_times import COMPLETE_JS  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from core.runs.warm_pool import log_path  # noqa: E402
from core.cli.warm_worker import READY  # noqa: E402
from tests.server import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402


WARM_UP_S = 3.0  # after both warm workers said they are ready


def one_start(page, url: str, store: RunStore, network: str) -> dict:
    page.goto(f"{url}/configure?network={network}&epochs=2")
    page.get_by_text("Configuration is valid").wait_for(timeout=60_000)
    # Then the page complete, as a user sees it before reaching for the button: clicked while the page still
    # ran, the click waited for that run and then a whole new one (1.2-3.2 s of the figure, before 2026-11-30).
    page.wait_for_function(COMPLETE_JS, arg="configure", timeout=60_000, polling=20)
    progress = page.locator('[data-testid="stMain"] [data-testid="stProgress"]').first
    clicked = time.time()
    page.get_by_role("button", name="Start training").click()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            found = re.search(r"step (\d+)/", progress.inner_text(timeout=500))
        except Exception:  # the Train page is still loading
            found = None
        if found and int(found.group(1)) >= 1:
            break
        time.sleep(0.02)
    seen_at = time.time()
    seen = seen_at - clicked
    run = store.list_runs()[0]
    while store.get(run.id).active:  # let it finish: one run at a time
        time.sleep(0.2)
    rows = store.steps(run.id)
    first = next((line for line in store.logs(run.id) if "first step" in line.message), None)
    compile_s = float(re.search(r"took ([\d.]+) s", first.message).group(1)) if first else None
    return {"network": network, "click_to_first_live_step_s": round(seen, 2),
            "click_to_worker_start_s": round(run.started - clicked, 2) if run.started else None,
            "first_call_s": compile_s, "first_step_elapsed_s": rows[0].elapsed if rows else None,
            "click_to_first_step_done_s": round(first.t - clicked, 2) if first else None,
            "first_step_done_to_page_s": round(seen_at - first.t, 2) if first else None,
            "status": store.get(run.id).status}


def one_server(browser, warm: bool, rep: int) -> list[dict]:
    """A fresh server and store (with or without warm workers), a Start of each network on it."""
    root = Path(tempfile.mkdtemp(prefix="start-latency-"))
    server, store, rows = start_server(root, extra_env={"STUDIO_WARM_WORKERS": "1" if warm else "0"}), RunStore(root), []
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        if warm:  # as a server has long done before anyone presses Start: both workers loaded, then a breath
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not all(
                    READY in (log_path(store, n).read_text() if log_path(store, n).exists() else "")
                    for n in ("lenet5", "mlp")):
                time.sleep(0.5)
            time.sleep(WARM_UP_S)
        for network in ("lenet5", "mlp"):
            row = one_start(page, server.url, store, network) | {"run_of_setting": rep + 1, "warm_workers": warm}
            rows.append(row)
            print(json.dumps(row), flush=True)
        page.close()
    finally:
        server.stop()
    return rows


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for rep in range(args.reps):
            for warm in (False, True):  # interleaved: a server without warm workers, then one with them
                rows += one_server(browser, warm, rep)
        browser.close()
    out = {"command": "python -m bench.start_latency " + " ".join(sys.argv[1:] if argv is None else argv),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "streamlit")},
           "rows": rows}
    path = ROOT / "bench" / "results" / "start_latency.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written: {path}")

    return out


if __name__ == "__main__":
    main()
