"""Load test: concurrent sessions against `streamlit run app.py` on 127.0.0.1 while a run trains.

    .venv/bin/python -m bench.load_test [--sessions 66] [--browsers 6] [--seconds 60] [--equal-priority]

The default is a class at once: 60 viewers (websocket sessions) and 6 real browsers drawing, while the queue
trains (the measured run is started through the queue, with another queued behind it).

--browsers real Chromium sessions draw digits on Draw & predict (each stroke is a predict); the other
sessions are websocket clients (bench/ws_client.py) on the live Train page, polling its fragment whenever
the server schedules it, exactly as a browser tab does, without rendering (a rendering browser per session
would measure Chromium on two cores, not the server). The browsers and clients stand in for the class's own
computers, so they run at the lowest CPU priority (--equal-priority: at the server's) and their CPU time is
reported. An update is a new chart of the live view; "steady" figures count the second half of the window,
after every viewer has opened the page. Prints and writes (bench/results/load.json): sessions, duration,
updates per viewer, bytes received, the poll interval the server chose, errors (exceptions in pages, page
crashes, dropped connections, tracebacks in the server log), training speed before, with the server idle,
and under load (same run config, same measuring method), and the server's peak RSS and CPU use.
"""
from __future__ import annotations

import contextlib
import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from core.config import TrainConfig
from core import PROJECT_ROOT
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore
from tests.support.helpers import cli, wait_for
from tests.support.server import AS_DEPLOYED, CHROMIUM, CHROMIUM_ARGS, start_server

STROKE_EVERY_S = 2.0  # per drawing session: a person draws a stroke, looks, draws the next


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM in kB from /proc."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                out[k] = int(v.split()[0])
    return out


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def training_rate(store: RunStore, config: TrainConfig, window_s: float, during=None) -> dict:
    """Start a run, wait for its steady state, count steps over window_s (running `during` meanwhile)."""
    from core.runs.launch import launcher
    run_id = launcher.start(store, config, name="load-test")  # through the queue, as every Start
    behind = launcher.start(store, config.with_(epochs=1), name="queued behind it")  # the queue holds one more
    wait_for(lambda: store.get(run_id).step > 20, timeout=180, what="training to reach steady state")
    worker_pid = store.get(run_id).pid
    s0, t0, c0 = store.get(run_id).step, time.monotonic(), cpu_seconds(worker_pid)
    try:
        extra = during(window_s) if during else time.sleep(window_s)
        s1, t1, c1 = store.get(run_id).step, time.monotonic(), cpu_seconds(worker_pid)
    finally:
        RunQueue(store).cancel(behind)
        launcher.stop(store, run_id)
        wait_for(lambda: not store.get(run_id).active, timeout=30, what="the run to stop")
    steps = s1 - s0
    return {"run_id": run_id, "steps": steps, "seconds": t1 - t0, "steps_per_s": steps / (t1 - t0),
            "samples_per_s": steps * config.batch_size / (t1 - t0), "worker_cpu_s": c1 - c0, "extra": extra}


def _open_drawers(browser, server_url: str, n: int, counts: dict) -> list:
    """n Draw pages, one browser context (its own window) each: Chromium stops rendering hidden tabs."""
    drawers = []
    for _ in range(n):
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.on("pageerror", lambda _: counts.__setitem__("page_errors", counts["page_errors"] + 1))
        page.on("crash", lambda _: counts.__setitem__("crashes", counts["crashes"] + 1))
        page.goto(server_url + "/draw", timeout=300_000, wait_until="domcontentloaded")
        page.locator("canvas.upper-canvas").first.wait_for(timeout=300_000)
        drawers.append(page)
    return drawers


def _draw_until(drawers: list, t0: float, seconds: float, counts: dict) -> None:
    """A stroke per drawing session every STROKE_EVERY_S (each one is a prediction) until the time is up."""
    rng = random.Random(0)
    if not drawers:  # viewers only
        time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
        return
    while time.monotonic() - t0 < seconds:
        round_start = time.monotonic()
        for page in drawers:
            box = page.locator("canvas.upper-canvas").first.bounding_box()
            x, y = box["x"] + rng.uniform(60, 220), box["y"] + rng.uniform(40, 120)
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x + rng.uniform(-40, 40), y + rng.uniform(60, 140), steps=6)
            page.mouse.up()
            counts["strokes"] += 1
        drawers[0].wait_for_timeout(max(0.0, STROKE_EVERY_S - (time.monotonic() - round_start)) * 1000)


def _predictions_shown(drawers: list) -> int:
    predicted = 0
    for page in drawers:
        try:
            page.get_by_text("Prediction:").first.wait_for(timeout=30_000)
            predicted += 1
        except Exception as e:
            print(f"a drawing session shows no prediction: {e}")
    return predicted


def _start_watchers(server_url: str, n: int, seconds: float) -> subprocess.Popen:
    """The websocket sessions run in their own process, like separate clients."""
    return subprocess.Popen([sys.executable, "-m", "bench.ws_client", server_url, "--sessions", str(n),
                             "--seconds", str(seconds)], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)))


def _watcher_figures(watchers: list, elapsed: float) -> dict:
    """An update is a new chart of the live view (one per poll of its fragment); "steady" counts the second
    half of the window only, after every viewer has opened the page (60 opening together take a while)."""
    half = elapsed / 2
    steady = [sum(1 for t in w.chart_times if t >= half) / (elapsed - half) for w in watchers]
    every = [w.charts_received / elapsed for w in watchers]
    return {"websocket_sessions_on_train": len(watchers),
            "watcher_errors": sum(len(w.errors) for w in watchers),
            "watcher_reruns_sent": sum(w.reruns_sent for w in watchers),
            "watcher_scripts_finished": sum(w.scripts_finished for w in watchers),
            "watcher_mb_received": sum(w.bytes_received for w in watchers) / 1e6,
            "watcher_updates_per_s_each": sum(every) / len(every) if every else None,
            "watcher_min_updates_per_s": min(every, default=None),
            "watcher_steady_updates_per_s_each": sum(steady) / len(steady) if steady else None,
            "watcher_steady_min_updates_per_s": min(steady, default=None),
            "watchers_below_half_an_update_per_s_steady": sum(u < 0.5 for u in steady),
            "poll_intervals_at_the_end": sorted({w.intervals[-1] for w in watchers if w.intervals}),
            "watcher_exception_samples": sorted({e for w in watchers for e in w.exceptions})[:5],
            "watcher_error_samples": sorted({e for w in watchers for e in w.errors})[:5]}


def _descendants(root: int) -> list[int]:
    """Every process below root (by /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _load_generators(ws_pid: int) -> list[int]:
    """The processes that stand in for the class's own machines: the websocket clients, and Playwright's
    driver with its Chromium. Not the app server, nor the training workers (this process's dispatcher starts
    the measured runs: lowering every child of this process slowed the training itself)."""
    drivers = []
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"playwright" in f.read():
                    drivers.append(pid)
        except OSError:
            continue
    return sorted({ws_pid, *drivers, *(d for pid in drivers for d in _descendants(pid))})


def _autogroup(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/autogroup") as f:
            return f.read().split()[0]
    except OSError:
        return None  # gone, or a kernel without autogroups


def _lower_priority(pids: list[int], keep: list[int]) -> int:
    """On one two-core machine the students' browsers would take the CPU their own computers give them in a
    class: they run at the lowest priority, and their CPU time is reported (generators_cpu_s).

    A thread's nice value only ranks it within its autogroup (Linux, kernel.sched_autogroup_enabled=1, the
    default here): Chromium runs in a session of its own (Playwright starts it detached), and its group got
    the same share of the CPU as the training's group whatever its threads' nice values (measured: the
    generators took 0.9 of a core "at the lowest priority"). So each generator's own group is lowered too;
    not the groups of `keep` (the app server and this process, whose websocket clients share its group)."""
    kept, lowered = {_autogroup(pid) for pid in keep}, 0
    groups = {_autogroup(pid): pid for pid in pids}  # one process of each group
    for group, group_pid in groups.items():
        if group is None or group in kept:
            continue
        try:
            with open(f"/proc/{group_pid}/autogroup", "w") as f:
                f.write("19")
            lowered += 1
        except OSError:
            pass  # gone, or no autogroups: the threads' own priority below still applies
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")  # Linux: a priority belongs to a thread, not a process
        except OSError:
            continue  # gone already (a short-lived helper)
        for tid in threads:
            with contextlib.suppress(OSError):  # that thread has ended
                os.setpriority(os.PRIO_PROCESS, int(tid), 19)
    return lowered


def cpu_of(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):  # exited: its time is not counted
            total += cpu_seconds(pid)
    return total


def drive_load(server_url: str, server_pid: int, sessions: int, browsers: int, seconds: float,
               equal_priority: bool = False) -> dict:
    """Open the browsers (drawing) and websocket watchers, keep them busy for `seconds`, report."""
    from playwright.sync_api import sync_playwright
    counts = {"strokes": 0, "page_errors": 0, "crashes": 0}
    rss = {"peak_kb": 0, "samples": []}
    stop = threading.Event()

    def sample_memory():
        while not stop.wait(0.5):
            s = proc_status(server_pid)
            rss["peak_kb"] = max(rss["peak_kb"], s["VmRSS"])
            rss["samples"].append(s["VmRSS"])

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        opened = time.monotonic()
        drawers = _open_drawers(browser, server_url, browsers, counts)
        open_seconds = time.monotonic() - opened
        cpu0, t0 = cpu_seconds(server_pid), time.monotonic()
        threading.Thread(target=sample_memory, daemon=True).start()
        ws_proc = _start_watchers(server_url, sessions - browsers, seconds)
        generators = _load_generators(ws_proc.pid)
        groups_lowered = 0 if equal_priority else _lower_priority(generators, keep=[server_pid, os.getpid()])
        g0 = cpu_of(generators)
        _draw_until(drawers, t0, seconds, counts)
        generators_cpu = cpu_of(generators) - g0  # before the websocket clients exit
        watchers = [SimpleNamespace(**d) for d in json.loads(ws_proc.communicate(timeout=seconds + 60)[0])]
        elapsed = time.monotonic() - t0
        cpu = cpu_seconds(server_pid) - cpu0
        stop.set()
        predicted = _predictions_shown(drawers)
        exceptions = sum(page.locator('[data-testid="stException"]').count() for page in drawers)
        browser.close()
    return {"sessions": sessions, "browser_sessions_drawing": browsers, "seconds_to_open_browsers": open_seconds,
            "seconds": elapsed, **counts, "draw_sessions_with_a_prediction": predicted,
            "exceptions_shown": exceptions + sum(len(w.exceptions) for w in watchers),
            **_watcher_figures(watchers, elapsed),
            "server_cpu_s": cpu, "server_cpu_share": cpu / elapsed,
            "generators_at_lowest_priority": not equal_priority, "generator_autogroups_lowered": groups_lowered, "generators_cpu_s": generators_cpu,
            "server_peak_rss_mb": rss["peak_kb"] / 1024,
            "server_rss_first_mb": (rss["samples"][0] / 1024) if rss["samples"] else None,
            "server_rss_last_mb": (rss["samples"][-1] / 1024) if rss["samples"] else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=66)
    ap.add_argument("--browsers", type=int, default=6, help="how many of the sessions are real browsers")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--json", default=str(PROJECT_ROOT / "bench" / "results" / "load.json"))
    ap.add_argument("--equal-priority", action="store_true",
                    help="run the browsers and websocket clients at the server's priority (by default they run "
                         "at the lowest: on one machine they stand in for the class's own computers)")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print("Chromium is needed: apt-get install chromium chromium-driver", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="studio-load-"))
    store = RunStore(tmp / "store")
    # a model to predict with (the Draw page picks the newest finished run with a checkpoint)
    p = cli("core.cli.train", "--network", "mlp", "--mode", "pynative", "--epochs", "1", "--store", str(store.root),
            "--name", "predictor")
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return 1
    config = TrainConfig(epochs=200)  # the default LeNet-5 run, long enough to outlast the window
    os.environ["STUDIO_WARM_WORKERS"] = "0"  # this process's own dispatcher (below) keeps no warm workers
    from core.runs.launch import launcher
    launcher.serve(store)  # a dispatcher for the baseline, before any server runs (the queue starts every run)
    window = max(args.seconds / 2, 20.0)
    print("baseline: training with no browser attached…", flush=True)
    baseline = training_rate(store, config, window)
    server = start_server(store.root, extra_env={"STUDIO_WARM_WORKERS": "1", **AS_DEPLOYED})  # the server as deployed
    try:
        idle = training_rate(store, config, window)  # server up, nobody connected
        print(f"load: {args.sessions} browser sessions for {args.seconds:.0f} s…", flush=True)
        loaded = training_rate(store, config, args.seconds,
                               during=lambda _: drive_load(server.url, server.proc.pid, args.sessions,
                                                           min(args.browsers, args.sessions), args.seconds,
                                                           args.equal_priority))
        server_alive = server.proc.poll() is None
        log = server.log()
    finally:
        server.stop()
    load = loaded.pop("extra")
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(), "versions": _versions(),
        "training_config": "LeNet-5 defaults (Graph, Cell style, batch 64) on the bundled 5,000 images",
        "baseline_samples_per_s": baseline["samples_per_s"], "server_idle_samples_per_s": idle["samples_per_s"],
        "under_load_samples_per_s": loaded["samples_per_s"],
        "slowdown_vs_baseline": baseline["samples_per_s"] / loaded["samples_per_s"],
        "slowdown_vs_idle_server": idle["samples_per_s"] / loaded["samples_per_s"],
        "server_alive_after": server_alive, **_tracebacks(log), **load,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    width = max(len(k) for k in result)
    for k, v in result.items():
        print(f"{k:<{width}}  {v:.3f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    ok = (server_alive and result["exceptions_shown"] == 0 and result["crashes"] == 0
          and result["watcher_errors"] == 0 and result["server_log_tracebacks"] == 0
          and result["draw_sessions_with_a_prediction"] == result["browser_sessions_drawing"])
    print("OK: no errors" if ok else "ERRORS: see above and the server log in " + str(server.log_path))
    return 0 if ok else 1


def _tracebacks(log: str) -> dict:
    """Tracebacks in the server's log. Streamlit's websocket handler logs one when a client leaves while a
    message for it is being read (seen as the 60 clients leave at the end); those are counted apart."""
    blocks = log.split("Traceback (most recent call last)")[1:]
    at_leaving = sum("WebSocketDisconnected" in b for b in blocks)
    return {"server_log_tracebacks": len(blocks) - at_leaving, "server_log_tracebacks_as_clients_left": at_leaving}


def _versions() -> dict:
    from importlib.metadata import version
    return {p: version(p) for p in ("mindspore", "streamlit", "numpy", "playwright")}


if __name__ == "__main__":
    sys.exit(main())
