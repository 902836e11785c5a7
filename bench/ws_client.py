"""A minimal Streamlit websocket client that behaves like a browser tab watching a page: it asks for the
page, then re-runs each fragment whenever the server schedules it (st.fragment(run_every=...)), as the
browser does. It renders nothing, so many of them cost the machine only what they cost the server."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


@dataclass
class SessionStats:
    reruns_sent: int = 0
    scripts_finished: int = 0
    full_runs_finished: int = 0  # whole-page runs (the first, and any st.rerun)
    runs_cut_short: int = 0      # runs a newer request interrupted (FINISHED_EARLY_FOR_RERUN)
    charts_received: int = 0
    intervals: list[float] = field(default_factory=list)  # every poll interval the server set, in order
    # seconds from the start of the run, per chart  # plotly charts drawn: on the live Train page, one per update of its
    # curves
    chart_times: list[float] = field(default_factory=list)
    frames_received: int = 0
    bytes_received: int = 0
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _rerun(page_name: str, url: str, page_hash: str = "", fragment_id: str = "") -> bytes:
    msg = BackMsg()
    cs = msg.rerun_script
    cs.page_name = page_name
    cs.context_info.url = url
    cs.context_info.timezone = "UTC"
    if page_hash:
        cs.page_script_hash = page_hash
    if fragment_id:
        cs.fragment_id = fragment_id
        cs.is_auto_rerun = True
    return msg.SerializeToString()


def _count(msg: ForwardMsg, kind: str, stats: SessionStats, elapsed_s: float) -> None:
    """What a message other than the session's and the timers' adds to the session's figures."""
    if kind == "script_finished":
        stats.scripts_finished += 1
        stats.full_runs_finished += msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
        stats.runs_cut_short += msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN
    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        el = msg.delta.new_element
        if el.WhichOneof("type") == "exception":
            stats.exceptions.append(f"{el.exception.type}: {el.exception.message}")
        elif el.WhichOneof("type") == "plotly_chart":
            stats.charts_received += 1
            stats.chart_times.append(round(elapsed_s, 3))


async def watch_page(base_url: str, page_name: str, seconds: float, stats: SessionStats) -> None:
    """Open page_name and keep its fragments polling for `seconds`."""
    ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
    page_url = f"{base_url}/{page_name}"
    timers: dict[str, asyncio.Task] = {}
    intervals: dict[str, float] = {}
    page_hash = ""
    start = asyncio.get_running_loop().time()
    try:
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None) as ws:
            async def tick(fragment_id: str, interval: float):
                while True:
                    await asyncio.sleep(interval)
                    await ws.send(_rerun(page_name, page_url, page_hash, fragment_id))
                    stats.reruns_sent += 1

            await ws.send(_rerun(page_name, page_url))
            stats.reruns_sent += 1
            loop = asyncio.get_running_loop()
            end = loop.time() + seconds
            while (left := end - loop.time()) > 0:
                try:
                    frame = await asyncio.wait_for(ws.recv(), timeout=left)
                except TimeoutError:
                    break
                stats.frames_received += 1
                stats.bytes_received += len(frame)
                msg = ForwardMsg.FromString(frame)
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    page_hash = msg.new_session.page_script_hash
                elif kind == "auto_rerun":
                    fid, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                    stats.intervals.append(round(interval, 3))
                    if fid not in timers or intervals.get(fid) != interval:  # as the browser: reset on change
                        if fid in timers:
                            timers[fid].cancel()
                        timers[fid], intervals[fid] = asyncio.create_task(tick(fid, interval)), interval
                elif kind == "stop_auto_rerun":
                    for t in timers.values():
                        t.cancel()
                    timers.clear()
                else:
                    _count(msg, kind, stats, loop.time() - start)
    except (OSError, websockets.WebSocketException) as e:
        stats.errors.append(f"{type(e).__name__}: {e}")
    finally:
        for t in timers.values():
            t.cancel()


def main(argv=None) -> int:
    """python -m bench.ws_client URL --sessions N --seconds S [--page train]: prints the summed stats as JSON."""
    import argparse
    import json
    from dataclasses import asdict
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--sessions", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--page", default="train")
    args = ap.parse_args(argv)
    stats = [SessionStats() for _ in range(args.sessions)]

    async def run():
        await asyncio.gather(*(watch_page(args.url, args.page, args.seconds, s) for s in stats))

    asyncio.run(run())
    print(json.dumps([asdict(s) for s in stats]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
