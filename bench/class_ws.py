"""What a class round costs the app server with a class of phones, measured at the server with protocol-level
clients (figures for docs/teaching.md, not a test):

    .venv/bin/python -m bench.class_ws [--phones 30] [--seconds 40] [--send-every 5]

A real app server (`python -m ui.serve`, a password set, as for a room) on a store with a trained MLP and an open
round that asks for a 7. The projector is one client on Draw in presentation mode (the teacher, a member); each
phone is one client let in by the class link (a viewer's cookie of its own, as /studio/admit gives it, and a
phone's user agent). Every client speaks Streamlit's websocket
protocol as a browser tab does (bench/ws_client.py): it asks for the page and re-runs each fragment when the
server schedules it (the phone's look at the round every 3 s, the projector's mosaic every 2 s). A sending phone
also does what a finger and the Send button do: it sets the canvas's state to a drawn 7 (a 280×280 PNG, as the
canvas sends it), which runs the page, then presses 📤 Send with the same canvas state. Nothing is rendered, so
the figures are the server's side alone, not 30 Chromiums' on 2 cores.

While an MLP run trains (started through the queue, trained by the app server's dispatcher in its own
process), three windows of --seconds each: the training alone, the phones only watching (no drawing), then each
phone sending a drawing every --send-every seconds (staggered). Reported: the app server's CPU-seconds in each
window (its own process, not the training's), the drawings that reached the store, CPU-ms per drawing (the
difference between the last two windows over the drawings), CPU-ms per phone per second while watching, and
the training's samples/s in each window (the clients share this machine's cores with it).

Records bench/results/class_ws.json (date, versions, machine)."""
from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PASSWORD = "class-of-30"
PHONE_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
               "Chrome/126.0.0.0 Mobile Safari/537.36")


@dataclass
class Client:
    """One browser tab, as the server sees it."""
    page_hash: str = ""
    ids: dict[str, str] = field(default_factory=dict)  # widget key → element id, as the page gave them
    scripts_finished: int = 0
    runs_cut_short: int = 0  # a run a newer request interrupted (FINISHED_EARLY_FOR_RERUN)
    sends: int = 0
    sent_toasts: int = 0     # "Sent: your 7 …" seen: the page said the drawing is in
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


def canvas_state(rng: np.random.Generator) -> str:
    """The canvas's state after a drawn 7: its PNG as a data URL (what streamlit-drawable-canvas sends)."""
    from PIL import Image
    from bench.finetune_cost import canvas
    buffer = io.BytesIO()
    Image.fromarray(canvas(7, rng), "RGBA").save(buffer, "PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    return json.dumps({"drawing": {"raw": {"objects": [], "background": "#000000"}, "data": url},
                       "backgroundFit": None})


def rerun(page: str, url: str, query: str, client: Client, fragment_id: str = "",
          widgets: dict[str, object] | None = None) -> bytes:
    from streamlit.proto.BackMsg_pb2 import BackMsg
    msg = BackMsg()
    rs = msg.rerun_script
    rs.page_name, rs.query_string = page, query
    rs.context_info.url, rs.context_info.timezone = url, "UTC"
    if client.page_hash:
        rs.page_script_hash = client.page_hash
    if fragment_id:
        rs.fragment_id, rs.is_auto_rerun = fragment_id, True
    for widget_id, value in (widgets or {}).items():
        state = rs.widget_states.widgets.add()
        state.id = widget_id
        if value is True:
            state.trigger_value = True
        else:
            state.json_value = str(value)
    return msg.SerializeToString()


def _note(client: Client, page: str, frame: bytes, schedule) -> None:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    msg = ForwardMsg.FromString(frame)
    kind = msg.WhichOneof("type")
    if kind == "navigation":  # the pages' hashes (st.navigation): the one of `page` is what its reruns name
        client.page_hash = next((p.page_script_hash for p in msg.navigation.app_pages if p.url_pathname == page),
                                client.page_hash)
    elif kind == "auto_rerun":
        schedule(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
    elif kind == "script_finished":
        client.scripts_finished += 1
        client.runs_cut_short += msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN
        if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:  # a whole page run (not a fragment's)
            client.finished.set()
    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        el = msg.delta.new_element
        which = el.WhichOneof("type")
        if which == "exception":
            client.exceptions.append(f"{el.exception.type}: {el.exception.message}")
        elif which == "toast" and el.toast.body.startswith("Sent:"):
            client.sent_toasts += 1
        elif which == "alert" and el.alert.format == el.alert.ERROR:
            client.exceptions.append(el.alert.body)
        elif which in ("button", "bidi_component"):
            element_id = getattr(el, which).id
            client.ids[element_id.rsplit("-", 1)[-1]] = element_id


async def tab(base: str, page: str, query: str, headers: dict, seconds: float, client: Client,
              send_every: float | None = None, offset: float = 0.0, seed: int = 0) -> None:
    """One tab open for `seconds`: its fragments re-run as scheduled; with send_every, a drawn 7 sent that often."""
    import websockets
    url = f"{base}/{page}?{query}" if query else f"{base}/{page}"
    timers: dict[str, tuple[float, asyncio.Task]] = {}
    rng = np.random.default_rng(seed)
    try:
        async with websockets.connect(base.replace("http://", "ws://") + "/_stcore/stream", max_size=None,
                                      subprotocols=["streamlit"], additional_headers=headers) as ws:
            def schedule(fid: str, interval: float) -> None:
                if fid in timers and timers[fid][0] == interval:
                    return
                if fid in timers:
                    timers[fid][1].cancel()

                async def tick():
                    while True:
                        await asyncio.sleep(interval)
                        await ws.send(rerun(page, url, query, client, fid))
                timers[fid] = (interval, asyncio.create_task(tick()))

            async def receive():
                try:
                    async for frame in ws:
                        _note(client, page, frame, schedule)
                except websockets.ConnectionClosedError as e:  # the server or a keepalive ended it: a figure
                    client.errors.append(f"{type(e).__name__}: {e}")

            await ws.send(rerun(page, url, query, client))
            tasks = [asyncio.create_task(receive())]
            if send_every:
                await asyncio.wait_for(client.finished.wait(), 60)
                tasks.append(asyncio.create_task(draw_and_send(ws, lambda **k: rerun(page, url, query, client, **k),
                                                               client, send_every, offset, rng)))
            done, _ = await asyncio.wait(tasks, timeout=seconds)
            for task in done:
                task.result()  # a client that failed says why
            for task in tasks:
                task.cancel()
    except Exception as e:  # noqa: BLE001  # a client's failure is a figure of the run, reported below
        client.errors.append(f"{type(e).__name__}: {e}")
    finally:
        for _, task in timers.values():
            task.cancel()


async def draw_and_send(ws, make, client: Client, every: float, offset: float, rng: np.random.Generator) -> None:
    """As a finger and the Send button: the canvas's new state runs the page, then Send with the same state."""
    await asyncio.sleep(offset)
    while True:
        state = canvas_state(rng)
        client.finished.clear()
        await ws.send(make(widgets={client.ids["canvas"]: state}))
        await asyncio.wait_for(client.finished.wait(), 30)  # the page read the drawing: Send is there
        if "class_send" in client.ids:
            client.finished.clear()
            await ws.send(make(widgets={client.ids["canvas"]: state, client.ids["class_send"]: True}))
            client.sends += 1
            await asyncio.wait_for(client.finished.wait(), 30)
        await asyncio.sleep(every)


def server_cpu(pid: int) -> float:
    import psutil
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def window(base: str, phone_headers: list[dict], seconds: float, send_every: float | None,
                 teacher_headers: dict) -> tuple[list[Client], Client]:
    clients = [Client() for _ in phone_headers]
    projector = Client()
    await asyncio.gather(
        tab(base, "draw", "present=1", teacher_headers, seconds, projector),
        *(tab(base, "draw", "", headers, seconds, c, send_every, offset=(send_every or 0) * i / len(clients), seed=i)
          for i, (c, headers) in enumerate(zip(clients, phone_headers, strict=True))))
    return clients, projector


def _window_row(wall: float, cpu: float, clients_cpu: float, drawings: int, samples: int, phones: list,
                projector) -> dict:
    return {"seconds": round(wall, 1), "server_cpu_s": round(cpu, 2), "clients_cpu_s": round(clients_cpu, 2),
            "drawings": drawings, "samples_per_s": round(samples / wall, 1),
            "sends_pressed": sum(c.sends for c in phones), "sent_toasts": sum(c.sent_toasts for c in phones),
            "runs_cut_short": sum(c.runs_cut_short for c in [*phones, projector]),
            "page_runs": sum(c.scripts_finished for c in phones) + projector.scripts_finished,
            "exceptions": sorted({e for c in [*phones, projector] for e in c.exceptions})[:5],
            "errors": sorted({e for c in [*phones, projector] for e in c.errors})[:5]}


def _report(rows: dict, args, argv) -> None:
    """The per-phone and per-drawing costs, printed and recorded in bench/results/class_ws.json."""
    from bench.record import save, stamp
    watching, drawing = rows["phones watching"], rows["phones drawing"]
    per_drawing = ((drawing["server_cpu_s"] / drawing["seconds"] - watching["server_cpu_s"] / watching["seconds"])
                   * drawing["seconds"] / max(drawing["drawings"], 1) * 1000)
    per_phone = watching["server_cpu_s"] / watching["seconds"] / args.phones * 1000
    cores = drawing["server_cpu_s"] / drawing["seconds"]
    print(f"{args.phones} phones: watching {per_phone:.1f} CPU-ms per phone per second; each drawing sent "
          f"{per_drawing:.0f} CPU-ms more; drawing every {args.send_every:g} s the server used {cores:.2f} of a core")
    save("class_ws", {"command": " ".join(["python -m bench.class_ws", *(argv if argv is not None else sys.argv[1:])]),
                      **stamp("streamlit", "websockets"), "phones": args.phones, "send_every_s": args.send_every,
                      "run": "an MLP run with the defaults trains (started through the queue; the round reads with another MLP)",
                      "rows": rows, "cpu_ms_per_phone_second_watching": round(per_phone, 2),
                      "cpu_ms_per_drawing": round(per_drawing, 1), "cores_while_drawing": round(cores, 3)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--phones", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--send-every", type=float, default=5.0)
    args = ap.parse_args(argv)
    from core.app.passes import MEMBER, PASS_COOKIE, VIEWER, cookie_value, signing_key
    from core.config import TrainConfig
    from core.runs.people.class_round import Lesson
    from core.runs.people.permissions import LOCAL, claim_name
    from core.runs.run_queue import RunQueue
    from core.runs.store import RunStore
    from core.runs.worker.execute import execute
    from tests.support.helpers import wait_for
    from tests.support.server import AS_DEPLOYED, start_server
    from ui.identity import COOKIE

    root = Path(tempfile.mkdtemp(prefix="class-ws-"))
    store = RunStore(root)
    run_id = store.create_run(TrainConfig(network="mlp", epochs=1, data_dir=args.data_dir), name="model", source="cli")
    assert execute(store, run_id) == "completed"
    Lesson(store).open(LOCAL, store.existing(run_id), asked=7)
    server = start_server(root, extra_env={"STUDIO_PASSWORD": PASSWORD, **AS_DEPLOYED})
    try:
        key = signing_key(store.server_secret(), PASSWORD)
        token = secrets.token_urlsafe(24)
        assert claim_name(store, "Teacher", token) is None
        teacher = {"Cookie": f"{PASS_COOKIE}={cookie_value(key, MEMBER)}; {COOKIE}={token}:Teacher"}
        # each phone as after the class link's admit: its own viewer cookie (its student name comes from it)
        phones_headers = [{"User-Agent": PHONE_AGENT,
                           "Cookie": f"{PASS_COOKIE}={cookie_value(key, VIEWER, now=time.time() + i)}"}
                          for i in range(args.phones)]
        pid = server.proc.pid
        asyncio.run(window(server.url, phones_headers[:2], 10, None, teacher))  # warm-up: imports, the model
        training = RunQueue(store).submit(TrainConfig(epochs=1000, data_dir=args.data_dir), "trains", "bench", "Teacher")
        wait_for(lambda: store.existing(training).step > 20, 300, "the run to train")
        rows = {}
        for name, send_every in (("training alone", None), ("phones watching", None),
                                 ("phones drawing", args.send_every)):
            before_drawings, steps0 = len(Lesson(store).drawings()), store.existing(training).step
            cpu0, t0, clients0 = server_cpu(pid), time.monotonic(), time.process_time()
            if name == "training alone":
                time.sleep(args.seconds)
                phones, projector = [], Client()
            else:
                phones, projector = asyncio.run(window(server.url, phones_headers, args.seconds, send_every, teacher))
            cpu, wall, clients_cpu = server_cpu(pid) - cpu0, time.monotonic() - t0, time.process_time() - clients0
            drawings = len(Lesson(store).drawings()) - before_drawings
            rows[name] = _window_row(wall, cpu, clients_cpu, drawings, (store.existing(training).step - steps0) * 64,
                                     phones, projector)
            print(name, json.dumps(rows[name]))
        store.request(training, "stop")
        _report(rows, args, argv)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
