"""Live views: how often a session polls the store, and one shared build of a run's view for all of them."""
from __future__ import annotations

import threading
import time
from typing import Callable, Hashable, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["POLL_S", "SIDEBAR_POLL_S", "IDLE_POLL_S", "live_poll_interval", "SharedView", "shared_views",
           "run_snapshot", "timed_update"]

POLL_S = 1.0          # the live Train view, with few viewers
SIDEBAR_POLL_S = 3.0  # the sidebar's glance at the active run
IDLE_POLL_S = 5.0     # with no run active: how soon a page notices a run started elsewhere
# Every poll is a script run in the one server process, which shares two cores with the training: with
# many viewers, 1-second polls left each view updating rarely (bench/load_test.py). So the interval grows
# with the number of live viewers.
POLL_S_PER_VIEWER = 0.1
# And with how long a live update takes here. The browser asks for the next one every interval whether or not
# the last has finished, and a new request cuts the running one short: with updates slower than the interval
# (8 viewers and a drawing browser beside the training, bench/load_test.py) no update ever finished and every
# view froze. So the interval is at least LOAD_FACTOR times the recent duration of an update.
LOAD_FACTOR = 2.5
DURATION_EMA = 0.3  # weight of the newest update's duration in the running average
POLL_STEPS_S = (POLL_S, 2.0, 4.0, 8.0)
VIEWER_SEEN_S = 10.0
SHARED_VIEW_KEEP_S = 60.0  # views nobody asked for in this long are dropped

T = TypeVar("T")


@st.cache_resource
def _viewers() -> tuple[threading.Lock, dict[str, float]]:
    """Live viewers of this server: session id -> when it last polled."""
    return threading.Lock(), {}


@st.cache_resource
def _update_seconds() -> list:
    """[lock, running average of a live update's duration on this server (s)]."""
    return [threading.Lock(), 0.0]


class timed_update:
    """`with timed_update():` around a live update: its duration feeds the poll interval (also when a newer
    request cuts it short: it took at least that long)."""

    def __enter__(self):
        self.began = time.perf_counter()
        return self

    def __exit__(self, *exc):
        took = time.perf_counter() - self.began
        state = _update_seconds()
        with state[0]:
            state[1] = took if state[1] == 0.0 else (1 - DURATION_EMA) * state[1] + DURATION_EMA * took
        return False


def live_poll_interval() -> float:
    """Seconds between polls of the live Train view for this session, given how many sessions watch."""
    lock, seen = _viewers()
    now, ctx = time.monotonic(), get_script_run_ctx()
    with lock:
        if ctx is not None:
            seen[ctx.session_id] = now
        for sid in [k for k, t in seen.items() if now - t > VIEWER_SEEN_S]:
            del seen[sid]
        wanted = len(seen) * POLL_S_PER_VIEWER
    wanted = max(wanted, LOAD_FACTOR * _update_seconds()[1])
    # a few steps, so that a viewer coming or going rarely changes anyone's interval
    return next((s for s in POLL_STEPS_S if s >= wanted), POLL_STEPS_S[-1])


class SharedView:
    """While a run is live every watching session polls. Build each run's view (the figure alone costs
    ~20 ms) at most every max_age_s, once for all sessions; while one session rebuilds it, the others get
    the previous one instead of queueing (queued rebuilds starved 16 viewers in bench/load_test.py).
    Nobody mutates what this returns."""

    def __init__(self, max_age_s: float, keep_s: float = SHARED_VIEW_KEEP_S):
        self.max_age_s, self.keep_s = max_age_s, keep_s
        self.lock = threading.Lock()
        self.entries: dict[Hashable, list] = {}  # key -> [built_at, value, building]

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """build() for key, or its recent result. The caller passes build: this object outlives the script
        run that created it, so it must not call that run's functions."""
        now = time.monotonic()
        with self.lock:
            entry = self.entries.get(key)
            if entry and (now - entry[0] < self.max_age_s or entry[2]):
                return entry[1]
            if entry:
                entry[2] = True
        try:
            value = build()
        except BaseException:
            if entry:
                entry[2] = False
            raise
        with self.lock:
            self.entries[key] = [time.monotonic(), value, False]
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
