"""What a live Train page costs the browser that shows it, and the training beside it (a benchmark that prints
figures, not a test).

    .venv/bin/python -m bench.live_page_cost [--seconds 20] [--reps 2] [--browser /usr/bin/chromium-headless-shell]
        [--training-nice 10 0 --name live_page_cost-nice]

A server on an empty store, an MLP 64-64 training 200 epochs on the bundled images at full speed (the fastest
run the studio has: its curves change at every poll), one headless Chromium on /train. After the page shows the
run and 5 s more, over SECONDS: the CPU of Chromium's processes, of the server with its run, and the run's
steps. Rounds one after another; compare commits by running it on each, interleaved. docs/performance.md ("A live
page in the browser"). Results: bench/results/live_page_cost.json.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load_test import cpu_of  # noqa: E402
from bench.record import save, stamp  # noqa: E402
from core.runs.launch.priority import TRAINING_NICE_ENV  # noqa: E402
from core.runs.processes import process_tree  # noqa: E402
from tests.support.server import AS_DEPLOYED, CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402


def one_round(browser_path: str, seconds: float) -> dict:
    from playwright.sync_api import sync_playwright  # deferred: only this measurement needs Playwright
    from core.config import TrainConfig
    from core.runs.launch import launcher
    from core.runs.store import RunStore
    root = Path(tempfile.mkdtemp(prefix="live-page-"))
    server, store = start_server(root, extra_env=AS_DEPLOYED), RunStore(root)
    run_id = launcher.start(store, TrainConfig(network="mlp", hidden=(64, 64), epochs=200))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(server.url + "/train")
            page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=60_000)
            time.sleep(5)  # the page and the run past their start
            driver = next(c for c in psutil.Process().children(recursive=True) if "node" in c.name())
            def cpu() -> tuple[float, float]:  # Chromium's processes (under Playwright's driver); the server's
                return cpu_of(process_tree(driver.pid)), cpu_of(process_tree(server.proc.pid))
            (chromium0, server0), step0 = cpu(), store.get(run_id).step
            time.sleep(seconds)
            chromium1, server1 = cpu()
            figures = {"chromium_cpu_s": round(chromium1 - chromium0, 2),
                       "server_and_run_cpu_s": round(server1 - server0, 2),
                       "steps": store.get(run_id).step - step0}
            browser.close()
    finally:
        store.request(run_id, "stop")
        server.stop()
        shutil.rmtree(root, ignore_errors=True)  # the store and its logs: nothing kept but the figures
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--browser", default=CHROMIUM)
    ap.add_argument("--training-nice", nargs="+", default=[], metavar="N",
                    help="the run's worker at each of these nicenesses in turn, interleaved (STUDIO_TRAINING_NICE)")
    ap.add_argument("--name", default="live_page_cost", help="bench/results/NAME.json")
    args = ap.parse_args()
    rounds = []
    for k in range(args.reps):
        for nice in args.training_nice or [None]:
            if nice is not None:
                os.environ[TRAINING_NICE_ENV] = nice  # read by this process's launcher as it starts the worker
            rounds.append(one_round(args.browser, args.seconds) | ({} if nice is None else {"training_nice": nice}))
            print(f"round {k + 1}: {rounds[-1]}", flush=True)
    save(args.name, {**stamp(), "browser": args.browser, "seconds": args.seconds, "rounds": rounds})


if __name__ == "__main__":
    main()
