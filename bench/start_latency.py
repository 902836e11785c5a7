"""Start → first live step, as a user sees it in a real browser (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.start_latency [--reps 2]

A server on 127.0.0.1 with a fresh run store; the studio opened at its address (Train, as a user arrives), then
for each network, Configure (the page complete) → click "Start
training" → the Train page's progress shows step ≥ 1, timed in the page from the click's pointerdown (Playwright
itself takes 0.05-1.3 s here between its click() call and the pointerdown, waiting for the button to be
"stable": recorded apart as playwright_click_delay_s, not the user's wait); runs one after another; on a server with warm workers (the default:
core/runs/launch/warm_pool.py) and on one without, interleaved. Also split, from the store: the click to the
worker's start (process start, imports), the first graph call (compilation included), the training time at
the first step, and from the first step's end (its log line) to the page showing it.
Each row also has `cpu_s_click_to_page`: every kind of process's CPU-seconds (Chromium's renderer, its other
processes, the server, the workers, the rest) from the click's pointerdown to the step on the page.
Results: bench/results/start_latency.json (date, versions, machine).

    --just-started         the first Start on a fresh server, clicked as soon as Configure is complete
                           (bench/results/start_latency_just_started.json)
    --warm-only --settings batch_size=32 --think-s 8
                           Start with settings other than the defaults, clicked 8 s after the page is complete
                           (bench/results/start_latency_settings.json)
    --code DIR [DIR ...]   the servers of these checkouts in turn, interleaved (a worktree of another commit)
    --name NAME            write bench/results/NAME.json
"""
from __future__ import annotations

import argparse
import base64
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
from core.runs.launch.warm_pool import log_path  # noqa: E402
from core.cli.warm_worker import READY  # noqa: E402
from ui.first_step import FIRST_STEP_SENT  # noqa: E402
from tests.support.server import AS_DEPLOYED, CHROMIUM, CHROMIUM_ARGS, start_server  # noqa: E402


WARM_UP_S = 3.0  # after both warm workers said they are ready


class Frames:
    """When the server's messages reached the browser, by Chromium's DevTools protocol: the frame that first
    carries a progress of step >= 1 is when the server had drawn the first step (over the loopback, the
    server's part of the wait; the rest is the browser drawing it)."""

    STEP = re.compile(rb"step ([1-9][0-9]*)/")

    def __init__(self, page):
        self.clock: float | None = None  # wall time minus the protocol's monotonic time
        self.arrivals: list[float] = []  # wall times of the frames that carried a step
        cdp = page.context.new_cdp_session(page)
        cdp.on("Network.webSocketWillSendHandshakeRequest", self._handshake)
        cdp.on("Network.webSocketFrameReceived", self._frame)
        cdp.send("Network.enable")

    def _handshake(self, event: dict) -> None:
        self.clock = event["wallTime"] - event["timestamp"]

    def _frame(self, event: dict) -> None:
        data = event["response"]["payloadData"]
        payload = base64.b64decode(data) if event["response"]["opcode"] == 2 else data.encode()
        if self.clock is not None and self.STEP.search(payload):
            self.arrivals.append(event["timestamp"] + self.clock)

    def first_step_at(self, after: float) -> float | None:
        return next((t for t in self.arrivals if t >= after), None)


# Set on Configure before the click, read after it: when the user's click reached the page (its pointerdown) and
# when the Train page's progress first said step >= 1 (both by the page's clock, the machine's).
WATCH_JS = """() => {
  window.__studioDown = null; window.__studioShown = null;
  document.addEventListener('pointerdown', () => { window.__studioDown ??= Date.now();
    if (window.__studioCpuAtDown) window.__studioCpuAtDown(); }, {capture: true, once: true});
  const check = () => {
    const p = document.querySelector('[data-testid="stMain"] [data-testid="stProgress"]');
    const m = p && /step (\\d+)\\//.exec(p.innerText);
    if (m && +m[1] >= 1 && window.__studioShown === null) { window.__studioShown = Date.now(); seen.disconnect(); }
  };
  const seen = new MutationObserver(check);
  seen.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


class CpuWindow:
    """CPU-seconds of each kind of process (psutil) from the click's pointerdown (the page calls back) to the
    step on the page: Chromium's renderer, its other processes, the server, the workers, the rest."""

    def __init__(self, page, server_pid: int):
        self.server_pid, self.at_down = server_pid, None
        page.expose_binding("__studioCpuAtDown", lambda source: setattr(self, "at_down", self._now()))

    def since_down(self) -> dict[str, float] | None:
        if self.at_down is None:
            return None
        before, spent = self.at_down, {}
        for (kind, pid), cpu in self._now().items():
            spent[kind] = spent.get(kind, 0.0) + cpu - before.get((kind, pid), 0.0)
        return {kind: round(cpu, 2) for kind, cpu in sorted(spent.items())}

    def _now(self) -> dict[tuple[str, int], float]:
        import psutil
        found = {}
        for proc in psutil.process_iter(["cmdline", "cpu_times"]):
            if proc.info["cpu_times"] is None:
                continue
            command = " ".join(proc.info["cmdline"] or [])
            found[(self._kind(proc.pid, command), proc.pid)] = proc.info["cpu_times"].user + proc.info["cpu_times"].system
        return found

    def _kind(self, pid: int, command: str) -> str:
        if pid == self.server_pid:
            return "server"
        if "core.cli.warm_worker" in command or "core.cli.worker" in command:
            return "workers"
        if "chrom" in command.split(" ", 1)[0]:
            return "chromium renderer" if "--type=renderer" in command else "chromium, other processes"
        return "the rest (this bench, Playwright, the system)"


def server_wrote_at(server_log: str, run_id: str) -> float | None:
    """When the server handed the run's first step to the browser's connection, by its own log (ui/first_step.py)."""
    found = re.search(rf"{re.escape(FIRST_STEP_SENT)} {run_id} at ([\d.]+)", server_log)
    return float(found.group(1)) if found else None


def one_start(page, frames: Frames, url: str, store: RunStore, network: str, server_log, settings: str = "",
              think_s: float = 0.0, cpu: CpuWindow | None = None) -> dict:
    page.goto(f"{url}/configure?network={network}&epochs=2" + (f"&{settings}" if settings else ""))
    page.get_by_text("Configuration is valid").wait_for(timeout=60_000)
    # Then the page complete, as a user sees it before reaching for the button: clicked while the page still
    # ran, the click waited for that run and then a whole new one (1.2-3.2 s of the figure, before 2026-11-30).
    page.wait_for_function(COMPLETE_JS, arg="configure", timeout=60_000, polling=20)
    time.sleep(think_s)  # --think-s: a user reading the settings chosen before reaching for Start
    page.evaluate(WATCH_JS)
    called = time.time()
    page.get_by_role("button", name="Start training").click()
    page.wait_for_function("() => window.__studioShown !== null", timeout=120_000, polling=50)
    spent = cpu.since_down() if cpu is not None else None
    down_ms, shown_ms = page.evaluate("() => [window.__studioDown, window.__studioShown]")
    clicked, seen_at = down_ms / 1000, shown_ms / 1000
    sent = frames.first_step_at(after=clicked)
    run = store.list_runs()[0]
    while store.get(run.id).active:  # let it finish: one run at a time
        time.sleep(0.2)
    rows = store.steps(run.id)
    first = next((line for line in store.logs(run.id) if "first step" in line.message), None)
    compile_s = float(re.search(r"took ([\d.]+) s", first.message).group(1)) if first else None
    wrote = server_wrote_at(server_log(), run.id)
    return {"network": network, "click_to_first_live_step_s": round(seen_at - clicked, 2),
            "playwright_click_delay_s": round(clicked - called, 2),
            "click_to_worker_start_s": round(run.started - clicked, 2) if run.started else None,
            "first_call_s": compile_s, "first_step_elapsed_s": rows[0].elapsed if rows else None,
            "click_to_first_step_done_s": round(first.t - clicked, 2) if first else None,
            "first_step_done_to_page_s": round(seen_at - first.t, 2) if first else None,
            "click_to_server_sent_first_step_s": round(sent - clicked, 2) if sent else None,
            "click_to_server_wrote_first_step_s": round(wrote - clicked, 2) if wrote else None,
            "browser_drawing_s": round(seen_at - sent, 2) if sent else None,
            "status": store.get(run.id).status, "cpu_s_click_to_page": spent}


def warm_workers_ready(store: RunStore, started: dict[str, int]) -> None:
    """As on a server open for a while before anyone presses Start: a warm worker of each network loaded (after
    a run, the pool loads the next one; a Start clicked while it loads MindSpore shares the two cores with it),
    then a breath."""
    deadline = time.monotonic() + 120
    def ready(network: str) -> bool:
        path = log_path(store, network)
        return path.exists() and path.read_text().count(READY) > started[network]
    while time.monotonic() < deadline and not all(ready(n) for n in started):
        time.sleep(0.5)
    time.sleep(WARM_UP_S)


def one_server(browser, warm: bool, rep: int, code: Path = ROOT, settings: str = "", think_s: float = 0.0) -> list[dict]:
    """A fresh server and store (with or without warm workers), a Start of each network on it."""
    root = Path(tempfile.mkdtemp(prefix="start-latency-"))
    server = start_server(root, extra_env={"STUDIO_WARM_WORKERS": "1" if warm else "0", **AS_DEPLOYED}, code=code)
    store, rows = RunStore(root), []
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        frames, cpu = Frames(page), CpuWindow(page, server.proc.pid)
        started: dict[str, int] = {"lenet5": 0, "mlp": 0}
        if warm:
            warm_workers_ready(store, started)
        # As a user arrives: the studio's address opens Train (no run yet), then they go to Configure. Without
        # this, the first Start drew Train for the first time in the tab and in the server (page code loaded,
        # Chromium's chunks for its elements fetched and compiled): 0.8-1.6 s of Chromium's part.
        page.goto(server.url)
        page.wait_for_function(COMPLETE_JS, arg="train", timeout=60_000, polling=20)
        for network in ("lenet5", "mlp"):
            if warm:
                warm_workers_ready(store, started)
            started[network] += 1
            row = one_start(page, frames, server.url, store, network, server.log, settings, think_s, cpu) | {
                "run_of_setting": rep + 1, "warm_workers": warm, "settings": settings, "code": str(code)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        page.close()
    finally:
        server.stop()
    return rows


def just_started(browser, network: str, rep: int, code: Path = ROOT) -> dict:
    """The first Start on a server just started as deployed (warm workers and the preload on): Configure opened
    as soon as the server answers, Start clicked as soon as the page is complete. `code`: the checkout served."""
    root = Path(tempfile.mkdtemp(prefix="start-latency-"))
    began = time.time()
    server = start_server(root, extra_env={"STUDIO_WARM_WORKERS": "1", **AS_DEPLOYED}, code=code)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        answered = time.time()
        row = one_start(page, Frames(page), server.url, RunStore(root), network, server.log,
                        cpu=CpuWindow(page, server.proc.pid))
        page.close()
    finally:
        server.stop()
    return row | {"server": "just started", "server_answered_after_s": round(answered - began, 2),
                  "run_of_setting": rep + 1, "warm_workers": True, "code": str(code)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--just-started", action="store_true",
                    help="only the first Start on a server just started (bench/results/start_latency_just_started.json)")
    ap.add_argument("--code", nargs="+", type=Path, default=[ROOT],
                    help="checkouts to serve in turn, interleaved (a worktree of another commit)")
    ap.add_argument("--settings", default="", help="more of Configure's URL, e.g. batch_size=32 (other graphs)")
    ap.add_argument("--think-s", type=float, default=0.0, help="seconds between the page complete and the click")
    ap.add_argument("--warm-only", action="store_true", help="only servers with warm workers")
    ap.add_argument("--name", default="", help="the results' file name (bench/results/NAME.json) instead of the "
                                               "one the options choose")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for rep in range(args.reps):
            if args.just_started:
                for network in ("lenet5", "mlp"):
                    for code in args.code:
                        rows.append(just_started(browser, network, rep, code.resolve()))
                        print(json.dumps(rows[-1]), flush=True)
                continue
            for warm in (True,) if args.warm_only else (False, True):  # interleaved: without, then with
                for code in args.code:
                    rows += one_server(browser, warm, rep, code.resolve(), args.settings, args.think_s)
        browser.close()
    out = {"command": "python -m bench.start_latency " + " ".join(sys.argv[1:] if argv is None else argv),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "streamlit")},
           "rows": rows}
    name = args.name or ("start_latency_just_started" if args.just_started else
                         "start_latency_settings" if args.settings or args.warm_only or len(args.code) > 1 else
                         "start_latency")
    path = ROOT / "bench" / "results" / f"{name}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written: {path}")

    return out


if __name__ == "__main__":
    main()
