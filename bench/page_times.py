"""Opening each page, as a user does it in a real browser (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.page_times [--reps 3] [--runs 10]
    .venv/bin/python -m bench.page_times --imported 100 --imported-steps 10000   # with imported summaries too

A server on 127.0.0.1 with a run store of RUNS finished runs (small MLPs trained by the command line on the
bundled images, so every page has real runs, curves, checkpoints and layer statistics to show). In Chromium:
open the app, then for each page click its link in the sidebar and time the click → the page complete (the URL
is the page's, Streamlit's script state is "not running" and no element is stale, i.e. left from the page
before). Rounds go over all pages in the sidebar's order; the first visit of a page in a server's life is
reported apart from later ones (imports and caches warm up once per server). Also the first load of the app
(navigation → Train page complete) at once after the server answers its health check; then SETTLE seconds on
that page (a user reading it; the server loads MindSpore in the background meanwhile) before the clicks.
With --imported N, a second store holds the same runs and N imported summary folders of STEPS steps each
(bench/summary_import.py writes them as SummaryCollector does), dated before the store's own runs so that each
page opens on the same run in both stores; servers on the two stores alternate, one after another, and the
figures are reported per store with their ratio (pages with those runs in the store against pages without them). Results: bench/results/page_times.json, or page_times_imported.json with --imported.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from tests.support.server import AS_DEPLOYED, CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402
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
    server, rows = start_server(root, extra_env=AS_DEPLOYED), []
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


def with_imported(root: Path, runs: int, steps: int) -> Path:
    """A copy of the store at `root` with `runs` summary folders of `steps` steps imported into it, dated before
    the store's own runs: the pages open on the same (newest) run in both stores, so what differs is the store."""
    import numpy as np

    from bench.summary_import import write_folder
    from core.app.summary_import import SummaryImport
    from core.runs.store import RunStore
    bigger = root.parent / (root.name + "-imported")
    shutil.copytree(root, bigger)
    store, rng = RunStore(bigger), np.random.default_rng(0)
    oldest = min(r.created for r in store.list_runs())
    for i in range(runs):
        folder = root.parent / "summaries" / f"run-{i:03d}"
        write_folder(folder, steps, 100, rng)
        report = SummaryImport(store, folder).update(final=True)
        store.update(report.run_id, created=oldest - 3600 - i)
    return bigger


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
    ap.add_argument("--imported", type=int, default=0, help="also time a store with this many imported summaries")
    ap.add_argument("--imported-steps", type=int, default=10_000)
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    root = Path(tempfile.mkdtemp(prefix="page-times-")) / "store"
    seed_store(root, args.runs)
    stores = {"studio runs": root}
    if args.imported:
        stores[f"+{args.imported} imported"] = with_imported(root, args.imported, args.imported_steps)
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for rep in range(args.reps):
            for label, folder in stores.items():  # alternating: what slows the machine slows both alike
                rows += [r | {"server": rep + 1, "store": label} for r in one_server(browser, folder, args.settle)]
        browser.close()
    out = {"command": "python -m bench.page_times " + " ".join(sys.argv[1:] if argv is None else argv),
           **stamp("streamlit"), "runs_in_store": args.runs, "settle_s": args.settle,
           "summary": summary([r for r in rows if r["store"] == "studio runs"]), "rows": rows}
    if args.imported:
        out |= {"imported": args.imported, "imported_steps": args.imported_steps,
                "summary_with_imported": summary([r for r in rows if r["store"] != "studio runs"])}
        out["later_visit_ratio"] = {page: round(out["summary_with_imported"][page]["later_visits_s"]["median"]
                                                / figures["later_visits_s"]["median"], 2)
                                    for page, figures in out["summary"].items() if "later_visits_s" in figures}
    save("page_times_imported" if args.imported else "page_times", out)
    for name, figures in out["summary"].items():
        print(f"{name:20} {figures}")
    for name, ratio in out.get("later_visit_ratio", {}).items():
        print(f"{name:20} with imported / without: {ratio}")
    return out


if __name__ == "__main__":
    main()
