"""How often the live Train views poll: one interval for every viewer of this server, set by the CPU share the
server's process takes, and changed in the browsers without a whole-page run.

Every poll is a script run in the one server process, which shares the machine's cores with the training, and
Streamlit starts each poll's thread from its one event-loop thread. So the interval is one for all sessions; a
new server guesses it from the number of viewers until it has measured itself (a class opening the page
together at POLL_S keeps the event loop starting threads and no update finishes); it grows by one step as
soon as the share is over the budget and shrinks by one step only when twice the share stays under it with
room. Why each rule, with the measurements of the ones that failed: docs/reliability.md ("Live views").
"""
from __future__ import annotations

import math
import os
import threading
import time

import streamlit as st
from streamlit.logger import get_logger
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from core.app import model_service

__all__ = ["POLL_S", "live_poll_interval", "keep_pace", "timed_update"]

POLL_S = 1.0  # the live Train view, with few viewers
POLL_STEPS_S = (POLL_S, 2.0, 4.0, 8.0)  # each twice the one before: halving the interval doubles the work
# What the server may take from the training while views are live, in cores: 40% of the machine, and never
# above what one Python process (one interpreter lock) can use (2 cores: 0.8; docs/reliability.md).
SERVER_CPU_BUDGET = min(0.8, 0.4 * (os.cpu_count() or 2))
UPDATE_CPU_GUESS_S = 0.02  # a live update's cost to the server, until the server has measured its own
# The browser asks for the next update every interval whether or not the last has finished, and a new
# request cuts the running one short: updates slower than the interval would never finish. So the interval is
# at least LOAD_FACTOR times the recent duration of an update.
LOAD_FACTOR = 2.5
MEASURE_S = 5.0       # CPU share and update durations: averaged over about this many seconds
GROW_AFTER_S = 3.0    # a longer interval takes a few seconds to show in the CPU share: no second step before
SHRINK_AFTER_S = 10.0
SHRINK_ROOM = 0.85  # shorter only when twice today's share stays this far under the budget
VIEWER_SEEN_S = 10.0

_LOG = get_logger(__name__)  # Streamlit's logging: its level and format, in the server's log


class _Pace:
    """The server's state: viewers, measured costs and the interval (one lock for all of it)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.viewers: dict[str, float] = {}  # session id -> when it last asked
        self.interval: float | None = None
        self.changed = 0.0
        self.update_s: float | None = None   # running average of a live update's duration
        self.updated_at: float | None = None
        self.cpu_share: float | None = None  # running average of this process's CPU use, in cores
        self.sampled: tuple[float, float] | None = None  # (monotonic, process_time) of the last sample


@st.cache_resource
def _pace() -> _Pace:
    return _Pace()


def _blend(average: float | None, value: float, elapsed_s: float) -> float:
    """A running average over about MEASURE_S seconds, however many samples they hold."""
    if average is None:
        return value
    weight = 1 - math.exp(-elapsed_s / MEASURE_S)
    return (1 - weight) * average + weight * value


class timed_update:
    """`with timed_update():` around a live update (the Train view's poll): its duration keeps the interval
    above LOAD_FACTOR times it, also when a newer request cuts it short (it took at least that long)."""

    def __enter__(self):
        self.began = time.perf_counter()
        return self

    def __exit__(self, *exc):
        took, now, pace = time.perf_counter() - self.began, time.monotonic(), _pace()
        with pace.lock:
            pace.update_s = _blend(pace.update_s, took, now - (pace.updated_at or now))
            pace.updated_at = now
        return False


def live_poll_interval() -> float:
    """Seconds between polls of the live Train views of this server (see the module's notes)."""
    pace, now, ctx = _pace(), time.monotonic(), get_script_run_ctx()
    with pace.lock:
        if ctx is not None:
            pace.viewers[ctx.session_id] = now
        for sid in [k for k, t in pace.viewers.items() if now - t > VIEWER_SEEN_S]:
            del pace.viewers[sid]
        _sample_cpu(pace, now)
        chosen = _choose(pace, now)
        if chosen != pace.interval:
            _LOG.info("live views poll every %s s (was %s): %d viewers, server %.2f of a core, %.0f ms per update",
                      chosen, pace.interval, len(pace.viewers), pace.cpu_share or 0.0, 1000 * (pace.update_s or 0))
            pace.interval, pace.changed = chosen, now
        return pace.interval


def _sample_cpu(pace: _Pace, now: float) -> None:
    cpu = time.process_time() - model_service.preload_cpu_seconds()  # a one-off at the start, not the views' work
    if pace.sampled is None:
        pace.sampled = (now, cpu)
    elif now - pace.sampled[0] >= 1.0:
        elapsed = now - pace.sampled[0]
        pace.cpu_share = _blend(pace.cpu_share, (cpu - pace.sampled[1]) / elapsed, elapsed)
        pace.sampled = (now, cpu)


def _choose(pace: _Pace, now: float) -> float:
    current, overlap_s = pace.interval, LOAD_FACTOR * (pace.update_s or 0.0)
    if current is None or pace.cpu_share is None:  # a guess from the viewers until the server has measured
        wanted = max(len(pace.viewers) * UPDATE_CPU_GUESS_S / SERVER_CPU_BUDGET, overlap_s)
        return max(current or POLL_S, next((s for s in POLL_STEPS_S if s >= wanted), POLL_STEPS_S[-1]))
    i = POLL_STEPS_S.index(current)
    since = now - pace.changed
    if (pace.cpu_share > SERVER_CPU_BUDGET and since > GROW_AFTER_S) or overlap_s > current:
        return POLL_STEPS_S[min(i + 1, len(POLL_STEPS_S) - 1)]
    if i > 0 and 2 * pace.cpu_share < SHRINK_ROOM * SERVER_CPU_BUDGET and since > SHRINK_AFTER_S \
            and overlap_s <= POLL_STEPS_S[i - 1]:
        return POLL_STEPS_S[i - 1]
    return current


def keep_pace(registered_s: float, wanted_s: float) -> None:
    """Inside a polling fragment: have the browser poll it every wanted_s from now on. Changing run_every
    needed a whole-page run of the view (the interval is sent when a fragment is defined): 60 viewers did
    little else, and some never finished one. This sends the message st.fragment(run_every=...) sends
    (streamlit/runtime/fragment.py, Streamlit 1.67); the browser restarts its timer for that fragment when the
    interval differs (its handleAutoRerun)."""
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
