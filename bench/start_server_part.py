"""Start → first live step, the server's part alone: a browser tab without a browser (a benchmark that prints
figures, not a test).

    .venv/bin/python -m bench.start_server_part [--reps 5]

bench/start_latency.py times a Start in Chromium on the same two cores that the server and the run use: there
Chromium's renderer alone spends ~0.7-1.1 CPU-seconds between the click and the step on the page, which the
run and the server wait for. A user's browser runs on the user's machine. This bench times what such a user
waits for from the server: a websocket client that speaks Streamlit's protocol (as bench/class_ws.py does)
opens Configure on a server with warm workers, presses Start (the button's trigger, as a browser sends it) and
waits for the first message whose progress line says step >= 1: the click → the step on the wire, with no
browser on the machine. The network and the browser's own drawing of one progress line come on top.
Servers as ./run.sh starts them (warm workers and the preload on); each network's Start on its warm worker,
one run at a time. Also recorded: the click → the run's first step done (the worker's log), and the CPU-seconds
of the server and of the workers in that window.
Results: bench/results/start_server_part.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.class_ws import Client, rerun  # noqa: E402
from bench.load_test import cpu_of  # noqa: E402
from bench.start_latency import warm_workers_ready  # noqa: E402
from core.runs.processes import process_tree  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from tests.support.server import AS_DEPLOYED, start_server  # noqa: E402

STEP = re.compile(r"step ([1-9][0-9]*)/")
START_KEY = "configure_start"  # Configure's Start button (app_pages/configure.py)


def _progress_step(frame: bytes) -> int | None:
    """The step a progress line of this message says, if it is one."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    msg = ForwardMsg.FromString(frame)
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return None
    el = msg.delta.new_element
    if el.WhichOneof("type") != "progress":
        return None
    found = STEP.search(el.progress.text)
    return int(found.group(1)) if found else None


def _note_page(client: Client, page: str, frame: bytes) -> None:
    """The page's hash and its buttons' ids, the end of a whole page's run (bench/class_ws.py keeps the same)."""
    from bench.class_ws import _note
    _note(client, page, frame, schedule=lambda fid, interval: None)


async def one_start(base: str, network: str | None, sample=lambda: None) -> dict:
    """Configure opened and complete, then Start: when the click's message went and when the first step came
    on the wire; sample() just before the click and just after the step. network None: Configure only."""
    import websockets
    page, query = "configure", f"network={network or 'mlp'}&epochs=2"
    url, client = f"{base}/{page}?{query}", Client()
    async with websockets.connect(base.replace("http://", "ws://") + "/_stcore/stream", max_size=None,
                                  subprotocols=["streamlit"]) as ws:
        await ws.send(rerun(page, url, query, client))
        while not (client.finished.is_set() and START_KEY in client.ids):
            _note_page(client, page, await asyncio.wait_for(ws.recv(), 60))
        if client.exceptions:
            raise RuntimeError(f"Configure failed: {client.exceptions}")
        if network is None:
            return {}
        before = sample()
        clicked = time.time()
        await ws.send(rerun(page, url, query, client, widgets={client.ids[START_KEY]: True}))
        while True:
            frame = await asyncio.wait_for(ws.recv(), 60)
            if (_progress_step(frame) or 0) >= 1:
                return {"clicked": clicked, "step_on_the_wire": time.time(), "before": before, "after": sample()}


def one_server(rep: int) -> list[dict]:
    root = Path(tempfile.mkdtemp(prefix="start-server-part-"))
    server = start_server(root, extra_env={"STUDIO_WARM_WORKERS": "1", **AS_DEPLOYED})
    store, rows = RunStore(root), []
    started = {"lenet5": 0, "mlp": 0}
    try:
        # As a user arrives: a first page (which starts the server's preload of MindSpore), then the warm workers
        # ready and a breath (bench/start_latency.py does the same), so that no Start shares the cores with them.
        asyncio.run(one_start(server.url, None))
        for network in ("lenet5", "mlp"):
            warm_workers_ready(store, started)
            started[network] += 1
            workers = process_tree(server.proc.pid)[1:]  # the warm workers (and any other child)
            times = asyncio.run(one_start(server.url, network,
                                          lambda workers=workers: (cpu_of([server.proc.pid]), cpu_of(workers))))
            before, after = times["before"], times["after"]
            run = store.list_runs()[0]
            while store.get(run.id).active:  # one run at a time
                time.sleep(0.2)
            logs = store.logs(run.id)
            first = next((line for line in logs if "first step" in line.message), None)
            row = {"network": network, "rep": rep + 1,
                   "click_to_step_on_the_wire_s": round(times["step_on_the_wire"] - times["clicked"], 3),
                   "click_to_queued_s": round(logs[0].t - times["clicked"], 3) if logs else None,
                   "click_to_first_step_done_s": round(first.t - times["clicked"], 3) if first else None,
                   "server_cpu_s": round(after[0] - before[0], 2), "workers_cpu_s": round(after[1] - before[1], 2),
                   "status": store.get(run.id).status}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.stop()
    return rows


def summary(rows: list[dict]) -> dict:
    out = {}
    for network in ("lenet5", "mlp"):
        waits = sorted(r["click_to_step_on_the_wire_s"] for r in rows if r["network"] == network)
        if waits:
            out[network] = {"median_s": round(statistics.median(waits), 3), "worst_s": waits[-1], "best_s": waits[0]}
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="servers, each with a Start of each network")
    args = ap.parse_args(argv)
    rows = [row for rep in range(args.reps) for row in one_server(rep)]
    out = {"command": "python -m bench.start_server_part " + " ".join(sys.argv[1:] if argv is None else argv),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "streamlit")},
           "summary": summary(rows), "rows": rows}
    print(json.dumps(out["summary"]))
    path = ROOT / "bench" / "results" / "start_server_part.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written: {path}")
    return out


if __name__ == "__main__":
    main()
