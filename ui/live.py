"""Live views: how often a session polls the store, and one shared build of a run's view for all of them."""
from __future__ import annotations

import math
import threading
import time
from typing import Callable, Hashable, TypeVar

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

__all__ = ["POLL_S", "SIDEBAR_POLL_S", "IDLE_POLL_S", "live_poll_interval", "keep_pace",
           "SharedView", "shared_views",
           "run_snapshot", "active_snapshot", "timed_update"]

POLL_S = 1.0          # the live Train view, with few viewers
SIDEBAR_POLL_S = 3.0  # the sidebar's glance at the active run
IDLE_POLL_S = 5.0     # with no run active: how soon a page notices a run started elsewhere
# Every poll is a script run in the one server process, which shares two cores with the training: with
# many viewers, 1-second polls left each view updating rarely (bench/load_test.py). So the interval grows
# with the number of live viewers times the CPU time an update takes.
LIVE_CPU_SHARE = 0.6  # of a core: what the live views of all viewers together may take from the training
# And with how long a live update takes here. The browser asks for the next one every interval whether or not
# the last has finished, and a new request cuts the running one short: with updates slower than the interval
# (8 viewers and a drawing browser beside the training, bench/load_test.py) no update ever finished and every
# view froze. So the interval is at least LOAD_FACTOR times the recent duration of an update.
LOAD_FACTOR = 2.5
# Until this server has measured one: a class that opens the page together must not start at POLL_S.
# Streamlit runs each poll in a thread it starts from its one event-loop thread, and waits there until the
# thread has started; 60 viewers polling every second before any update had finished kept that thread
# waiting on the others, and no view finished (bench/load_test.py). Measured: 9-20 ms.
UPDATE_CPU_GUESS_S = 0.02
COSTS_OVER_S = 5.0  # an update's duration and CPU time: averaged over about this many seconds
POLL_STEPS_S = (POLL_S, 2.0, 4.0, 8.0)  # each twice the one before
HYSTERESIS = 0.5  # the interval shortens only when the shorter step leaves this much room
KEEP_INTERVAL_S = 10.0  # and for this long after a change
VIEWER_SEEN_S = 10.0
SHARED_VIEW_KEEP_S = 60.0  # views nobody asked for in this long are dropped

T = TypeVar("T")


@st.cache_resource
def _viewers() -> tuple[threading.Lock, dict[str, float]]:
    """Live viewers of this server: session id -> when it last polled."""
    return threading.Lock(), {}


@st.cache_resource
def _update_costs() -> list:
    """[lock, running average of a live update's duration (s), of its own CPU time (s), when the last update
    ended] on this server."""
    return [threading.Lock(), None, None, None]


_shared_cpu = threading.local()  # CPU seconds this thread spent building SharedView values


class timed_update:
    """`with timed_update():` around a live update (the Train view's poll): its duration and CPU time set the
    poll interval, also when a newer request cuts it short (it took at least that long). Its own CPU time: a
    SharedView build is done once for every viewer and is not counted (counted, one update in three carried a
    33 ms figure and the interval jumped between steps). Only live updates: with whole-page runs counted too,
    sixty people opening the page at once pushed the interval up, every view re-ran whole to take it up, and
    those runs pushed it further."""

    def __enter__(self):
        self.began, self.cpu, self.shared = time.perf_counter(), time.thread_time(), _shared_seconds()
        return self

    def __exit__(self, *exc):
        took = time.perf_counter() - self.began
        cpu = time.thread_time() - self.cpu - (_shared_seconds() - self.shared)
        costs, now = _update_costs(), time.monotonic()
        with costs[0]:
            # an average over the last COSTS_OVER_S seconds, however many updates they held (a weight per update
            # followed the last few of thirty a second, and the interval jumped between steps with each spike)
            weight = 1.0 if costs[3] is None else 1 - math.exp(-(now - costs[3]) / COSTS_OVER_S)
            for i, value in ((1, took), (2, cpu)):
                costs[i] = value if costs[i] is None else (1 - weight) * costs[i] + weight * value
            costs[3] = now
        return False


def _shared_seconds() -> float:
    return getattr(_shared_cpu, "seconds", 0.0)


def live_poll_interval() -> float:
    """Seconds between polls of the live Train views of this server: as often as POLL_S while the viewers'
    updates together (each also draws the sidebar's status) stay within LIVE_CPU_SHARE of a core, and never
    faster than LOAD_FACTOR times an update's duration. One interval for every viewer (chosen per session,
    some views were polled every second and others every four). Longer as soon as needed; shorter only when the
    shorter step fits with HYSTERESIS to spare, at most every KEEP_INTERVAL_S: the measured costs wobble across
    a step's edge (a symmetric margin left 60 viewers polling every second, 50% over budget, each getting an
    update every 10 s)."""
    viewers = _count_viewer()
    _, duration_s, cpu_s, _ = _update_costs()
    overlap_s = LOAD_FACTOR * (duration_s or 0.0)
    wanted = max(viewers * (UPDATE_CPU_GUESS_S if cpu_s is None else cpu_s) / LIVE_CPU_SHARE, overlap_s)
    step = next((s for s in POLL_STEPS_S if s >= wanted), POLL_STEPS_S[-1])  # a few steps: rare changes
    lock, pace = _pace()
    now = time.monotonic()
    with lock:
        current = pace.get("interval")
        shorter_fits = current is not None and wanted < current / 2 * (1 - HYSTERESIS)
        if current is None or step > current or (shorter_fits and now - pace["changed"] > KEEP_INTERVAL_S):
            pace["interval"], pace["changed"] = step, now
        return pace["interval"]


@st.cache_resource
def _pace() -> tuple[threading.Lock, dict[str, float]]:
    """The live views' poll interval on this server, and when it last changed."""
    return threading.Lock(), {}


def keep_pace(registered_s: float, wanted_s: float) -> None:
    """Inside a polling fragment: have the browser poll it every wanted_s from now on. Changing run_every
    needed a whole-page run of the view (the interval is sent when a fragment is defined): 60 viewers did
    little else, and some never finished one. This sends the message
    st.fragment(run_every=...) sends (streamlit/runtime/fragment.py, Streamlit 1.67); the browser restarts
    its timer for that fragment when the interval differs (its handleAutoRerun)."""
    ctx, fragment_id = get_script_run_ctx(), ThreadState.get().fragment_id
    if ctx is None or fragment_id is None:
        return
    key = f"_pace_{fragment_id}"
    # on a whole-page run the fragment was just defined with registered_s
    sent = st.session_state.get(key, registered_s) if ctx.fragment_ids_this_run else registered_s
    if wanted_s != sent:
        msg = ForwardMsg()
        msg.auto_rerun.interval, msg.auto_rerun.fragment_id = wanted_s, fragment_id
        ctx.enqueue(msg)
    st.session_state[key] = wanted_s


def _count_viewer() -> int:
    """Note this session as a live viewer; how many there are now."""
    lock, seen = _viewers()
    now, ctx = time.monotonic(), get_script_run_ctx()
    with lock:
        if ctx is not None:
            seen[ctx.session_id] = now
        for sid in [k for k, t in seen.items() if now - t > VIEWER_SEEN_S]:
            del seen[sid]
        return len(seen)


class SharedView:
    """While a run is live every watching session polls. Build each run's view (the figure alone costs
    ~30 ms) at most every max_age_s, or when its version changes, once for all sessions; while one session
    rebuilds it, the others get the previous one instead of queueing (queued rebuilds starved 16 viewers in
    bench/load_test.py). The version belongs in `version`, not in the key: with it in the key each new step
    was a new key with nothing to hand out, and every viewer arriving meanwhile built the same figure (60
    viewers: figure builds were 17% of the server's samples). Nobody mutates what this returns."""

    def __init__(self, max_age_s: float, keep_s: float = SHARED_VIEW_KEEP_S):
        self.max_age_s, self.keep_s = max_age_s, keep_s
        self.lock = threading.Lock()
        self.entries: dict[Hashable, list] = {}  # key -> [built_at, value, building, version]

    def get(self, key: Hashable, build: Callable[[], T], version: Hashable = None) -> T:
        """build() for key, or its recent result of the same version. The caller passes build: this object
        outlives the script run that created it, so it must not call that run's functions."""
        now = time.monotonic()
        with self.lock:
            entry = self.entries.get(key)
            if entry and (entry[2] or (now - entry[0] < self.max_age_s and entry[3] == version)):
                return entry[1]
            if entry:
                entry[2] = True
        cpu = time.thread_time()
        try:
            value = build()
        except BaseException:
            if entry:
                entry[2] = False
            raise
        finally:
            _shared_cpu.seconds = _shared_seconds() + time.thread_time() - cpu
        with self.lock:
            self.entries[key] = [time.monotonic(), value, False, version]
            for stale in [k for k, e in self.entries.items() if time.monotonic() - e[0] > self.keep_s]:
                del self.entries[stale]
        return value


@st.cache_resource
def shared_views() -> SharedView:
    return SharedView(max_age_s=POLL_S / 2)


def run_snapshot(store, run_id: str):
    """The run's row as every live view on this server shows it now: one read shared by the sidebar and the
    Train page (of all sessions), so that the statuses on one screen agree."""
    return shared_views().get((str(store.root), "run", run_id), lambda: store.get(run_id))


def active_snapshot(store):
    """The active run as every session's sidebar polls it: one read (and one check for dead workers) per
    server every max_age_s, not one per viewer per poll."""
    return shared_views().get((str(store.root), "active"), store.active_run)

