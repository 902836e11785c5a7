"""Opening each page, as a user does it in a real browser (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.page_times [--reps 3] [--runs 10]

A server on 127.0.0.1 with a run store of RUNS finished runs (small MLPs trained by the command line on the
bundled images, so every page has real runs, curves, checkpoints and layer statistics to show). In Chromium:
open the app, then for each page click its link in the sidebar and time the click → the page complete (the URL
is the page's, Streamlit's script state is "not running" and no element is stale, i.e. left from the page
before). Rounds go over all pages in the sidebar's order; the first visit of a page in a server's life is
reported apart from later ones (imports and caches warm up once per server). Also the first load of the app
(navigation → Train page complete) at once after the server answers its health check; then SETTLE seconds on
that page (a user reading it; the server loads MindSpore in the background meanwhile) before the clicks.
Results: bench/results/page_times.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from tests.support.server import CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402
from ui.navigation import PAGES  # noqa: E402

COMPLETE_JS = """url => {
  const app = document.querySelector('[data-testid="stApp"]');
  return location.pathname.replace(/\\/$/, '').endsWith('/' + url)
      && app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-stale="true"]')
      && document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]') !== null;
}"""


def seed_store(root: Path, runs: int) -> None:
    """RUNS finished runs of a small MLP (one after another; ~4 s each here)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDIO_DATA_DIR=str(root))
    for i in range(runs):
        subprocess.run([sys.executable, "-m", "core.cli.train", "--network", "mlp", "--hidden", "64", "--epochs", "1",
                        "--seed", str(i), "--store", str(root)],
                       cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)


def open_page(page, url: str, title: str) -> float:
    """Click the sidebar link of a page; seconds until it is complete."""
    link = page.locator('[data-testid="stSidebar"] a', has_text=title).first
    started = time.perf_counter()
    link.click()
    page.wait_for_function(COMPLETE_JS, arg=url, timeout=60_000, polling=20)
    return time.perf_counter() - started


def one_server(browser, root: Path, settle_s: float) -> list[dict]:
    from ui.language import t  # deferred: after sys.path has the project
    server, rows = start_server(root), []
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        started = time.perf_counter()
        page.goto(server.url)
        page.wait_for_function(COMPLETE_JS, arg="train", timeout=60_000, polling=20)
        rows.append({"page": "first load (train)", "visit": 1, "seconds": round(time.perf_counter() - started, 3)})
        time.sleep(settle_s)  # as a user reads the first page: the server's background preload finishes
        for visit in (1, 2, 3):
            for _, _, url in PAGES:
                if url == "train" and visit == 1:
                    continue  # just loaded
                seconds = open_page(page, url, t(f"nav.{url}"))
                rows.append({"page": url, "visit": visit, "seconds": round(seconds, 3)})
                print(json.dumps(rows[-1]), flush=True)
        page.close()
    finally:
        server.stop()
    return rows


def summary(rows: list[dict]) -> dict:
    by_page: dict[str, dict] = {}
    for row in rows:
        kind = "first_visit_s" if row["visit"] == 1 else "later_visits_s"
        by_page.setdefault(row["page"], {"first_visit_s": [], "later_visits_s": []})[kind].append(row["seconds"])
    return {p: {k: {"median": round(statistics.median(v), 2), "max": round(max(v), 2)} for k, v in d.items() if v}
            for p, d in by_page.items()}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2, help="servers, one after another (each visits every page 3 times)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--settle", type=float, default=5.0, help="seconds on the first page before clicking on")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    root = Path(tempfile.mkdtemp(prefix="page-times-"))
    seed_store(root, args.runs)
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for rep in range(args.reps):
            rows += [r | {"server": rep + 1} for r in one_server(browser, root, args.settle)]
        browser.close()
    out = {"command": "python -m bench.page_times " + " ".join(sys.argv[1:] if argv is None else argv),
           **stamp("streamlit"), "runs_in_store": args.runs, "settle_s": args.settle, "summary": summary(rows),
           "rows": rows}
    save("page_times", out)
    for name, figures in out["summary"].items():
        print(f"{name:20} {figures}")

    return out


if __name__ == "__main__":
    main()
