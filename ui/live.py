"""Live views: one shared build of a run's view (and of its row) for every session that polls it; how often
the sidebar polls. (How often the live Train view polls: ui/poll_interval.py.)"""
from __future__ import annotations

import threading
import time
from typing import TypeVar
from collections.abc import Callable, Hashable

import streamlit as st

__all__ = ["SIDEBAR_POLL_S", "IDLE_POLL_S", "CURVES_REFRESH_S", "SharedView", "shared_views", "curve_views",
           "run_snapshot", "active_snapshot"]

SIDEBAR_POLL_S = 3.0  # the sidebar's glance at the active run
IDLE_POLL_S = 5.0     # with no run active: how soon a page notices a run started elsewhere
SHARED_VIEW_KEEP_S = 60.0  # views nobody asked for in this long are dropped
SHARED_VIEW_MAX_AGE_S = 0.5  # a live view is rebuilt at most this often, once for all its viewers
# While a run trains at full speed its curves are drawn anew at most this often (the progress line at every
# poll): a browser draws the same figure once, and drawing the curves again is most of its work on a live page
# (docs/performance.md, "A live page in the browser").
CURVES_REFRESH_S = 3.0

T = TypeVar("T")


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
        try:
            value = build()
        except BaseException:
            if entry:
                entry[2] = False
            raise
        with self.lock:
            self.entries[key] = [time.monotonic(), value, False, version]
            for stale in [k for k, e in self.entries.items() if time.monotonic() - e[0] > self.keep_s]:
                del self.entries[stale]
        return value


@st.cache_resource
def shared_views() -> SharedView:
    return SharedView(max_age_s=SHARED_VIEW_MAX_AGE_S)


@st.cache_resource
def curve_views() -> SharedView:
    """The live curves' figures, shared as shared_views' are, each kept CURVES_REFRESH_S while its version holds."""
    return SharedView(max_age_s=CURVES_REFRESH_S)


def run_snapshot(store, run_id: str):
    """The run's row as every live view on this server shows it now: one read shared by the sidebar and the
    Train page (of all sessions), so that the statuses on one screen agree."""
    return shared_views().get((store.key, "run", run_id), lambda: store.get(run_id))


def active_snapshot(store):
    """The active run as every session's sidebar polls it: one read (and one check for dead workers) per
    server every max_age_s, not one per viewer per poll."""
    return shared_views().get((store.key, "active"), store.active_run)

