"""What a full load of each page costs the browser and the server, in CPU-seconds (a benchmark that prints
figures, not a test).

    .venv/bin/python -m bench.page_load_cost [--reps 3] [--pages /configure /train ...] [--code DIR ...]

A server on an empty store, one headless Chromium (`tests/support/server.py`'s browser, as the tests drive it).
The app is opened on /runs first (Streamlit's own bundle, once per browser); then each page is loaded by its
address, one after another, and the CPU of Chromium's processes and of the server is read SETTLE_S after each
load. Each page is loaded twice per round: its first load in this browser (nothing of the page's own code
cached) and again. With --code, each round starts a server from each checkout in turn (e.g. a `git worktree` of
the commit before), so two commits are measured side by side, interleaved; figures are medians over the rounds.
docs/performance.md ("Configure's network picture"). Results: bench/results/page_load_cost.json.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load_test import cpu_of  # noqa: E402
from bench.record import save, stamp  # noqa: E402
from core.runs.processes import process_tree  # noqa: E402
from tests.support.server import AS_DEPLOYED, launch_chromium, start_server  # noqa: E402

PAGES = ["/configure", "/data", "/train", "/evaluate", "/draw", "/runs"]
SETTLE_S = 4.0  # after a load: the page drawn and its charts laid out


def one_round(code: Path, pages: list[str]) -> dict[str, list[float]]:
    """{"<page> first"/"<page> again": [chromium_cpu_s, server_cpu_s]} for one server of `code`."""
    from playwright.sync_api import sync_playwright  # deferred: only this measurement needs Playwright
    store = Path(tempfile.mkdtemp(prefix="page-load-"))
    server = start_server(store, extra_env=AS_DEPLOYED, code=code)
    proc, url = server.proc, server.url
    figures: dict[str, list[float]] = {}
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            driver = next(c for c in psutil.Process().children(recursive=True) if "node" in c.name())
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url + "/runs")
            time.sleep(SETTLE_S + 2)  # the app's bundle, once; the server's background start-up
            for when in ("first", "again"):
                for path in pages:
                    chromium0, server0 = cpu_of(process_tree(driver.pid)), cpu_of(process_tree(proc.pid))
                    page.goto(url + path)
                    time.sleep(SETTLE_S)
                    figures[f"{path} {when}"] = [round(cpu_of(process_tree(driver.pid)) - chromium0, 2),
                                                 round(cpu_of(process_tree(proc.pid)) - server0, 2)]
            browser.close()
    finally:
        server.stop()
        shutil.rmtree(store, ignore_errors=True)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pages", nargs="+", default=PAGES)
    ap.add_argument("--code", nargs="+", type=Path, default=[ROOT],
                    help="checkouts to measure in turn (default: this one)")
    args = ap.parse_args()
    rounds: dict[str, list[dict]] = {str(c): [] for c in args.code}
    for k in range(args.reps):
        for code in args.code:
            rounds[str(code)].append(one_round(code.resolve(), args.pages))
            print(f"round {k + 1}, {code}: {rounds[str(code)][-1]}", flush=True)
    medians = {code: {load: [statistics.median(r[load][i] for r in rs) for i in (0, 1)] for load in rs[0]}
               for code, rs in rounds.items()}
    print("\nmedian CPU-seconds per load (Chromium, server):")
    for load in medians[str(args.code[0])]:
        print(f"  {load:22s} " + "   ".join(f"{m[load][0]:5.2f} {m[load][1]:5.2f}" for m in medians.values()))
    save("page_load_cost", {**stamp("streamlit"), "command": "python -m bench.page_load_cost " + " ".join(sys.argv[1:]),
                            "settle_s": SETTLE_S, "code": [str(c) for c in args.code], "medians": medians,
                            "rounds": rounds})


if __name__ == "__main__":
    main()
