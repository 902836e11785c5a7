"""One queue for everything that trains: runs wait as `queued` and take a slot when one frees.

Slots: how many runs train at once on this host (STUDIO_SLOTS, default 1: on the 2-core machine one run
already uses both cores); a data-parallel run takes one slot per worker, or every slot when it has more workers
than the host has slots.

Order (fairness between people): runs moved to the front go first (the last moved first); then the
submitters take turns — the one whose last run started longest ago (or never) goes next, each person's own
runs in the order they were queued. So one person's 20-trial sweep does not hold another person's single run
behind all 20: it waits for at most one of them. A run that needs more slots than are free waits, and so does
everything behind it (no overtaking: a large run is never starved by small ones).

Claiming the next run is one locked transaction of the store (RunStore.claim) that moves it from `queued` to
`starting`, so two dispatchers, on any hosts, can never both start one run (core/runs/launch/dispatcher.py also keeps
only one of them acting)."""
from __future__ import annotations

import heapq
import math
import os
import statistics
import time
from dataclasses import dataclass

from core.config import TrainConfig
from core.networks import known_network
from core.runs.rows import FULL_SPEED, QUEUED, QueueState, Run, StartPace, Status
from core.runs.store.roles import QueueStore

__all__ = ["RunQueue", "QueuedRun", "SLOTS_ENV", "slots_setting", "dispatch_order"]

SLOTS_ENV = "STUDIO_SLOTS"
MAX_QUEUED_ENV = "STUDIO_MAX_QUEUED_PER_PERSON"
DEFAULT_MAX_QUEUED = 100
MAX_SWEEPS_ENV = "STUDIO_MAX_OPEN_SWEEPS_PER_PERSON"
DEFAULT_MAX_SWEEPS = 3
DEFAULT_SLOTS = 1
MAX_SLOTS = 64
TRAIN_IMAGES_GUESS = 4_500


def slots_setting() -> int:
    """STUDIO_SLOTS as a whole number 0..64 (ValueError with what to set otherwise). 0: this host trains
    nothing itself — an app server whose runs all go to a Dask cluster (STUDIO_DASK_SCHEDULER)."""
    raw = os.environ.get(SLOTS_ENV, "").strip()
    if not raw:
        return DEFAULT_SLOTS
    if not raw.isdigit() or not 0 <= int(raw) <= MAX_SLOTS:
        raise ValueError(f"{SLOTS_ENV}={raw!r}: set it to a whole number of runs that may train at once on this "
                         f"host, 0 (none: a Dask cluster trains them) to {MAX_SLOTS}")
    return int(raw)


def max_queued_setting() -> int:
    """STUDIO_MAX_QUEUED_PER_PERSON: how many runs one person may have waiting, their sweeps' included (an
    admin's Start aside)."""
    return _count_setting(MAX_QUEUED_ENV, DEFAULT_MAX_QUEUED, "queued runs")


def max_sweeps_setting() -> int:
    """STUDIO_MAX_OPEN_SWEEPS_PER_PERSON: how many sweeps one person may have open at once."""
    return _count_setting(MAX_SWEEPS_ENV, DEFAULT_MAX_SWEEPS, "open sweeps")


def _count_setting(env: str, default: int, what: str) -> int:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{env}={raw!r}: set it to a whole number of {what} per person, 1 or more")
    return int(raw)


@dataclass(frozen=True)
class QueuedRun:
    run: Run
    position: int                # 1: next to start
    starts_in_s: float | None    # estimate from the runs ahead of it (None: unknown)
    held_by: str | None = None   # the paused run whose slot it waits for (no estimate: a pause has no end)


def dispatch_order(queued: list[Run], last_started: dict[str, float]) -> list[Run]:
    """The queued runs in the order they will start (see the module's docstring)."""
    front = sorted((r for r in queued if (r.queue_order or 0) < 0), key=lambda r: r.queue_order or 0)
    lines: dict[str, list[Run]] = {}
    for r in sorted((r for r in queued if (r.queue_order or 0) >= 0), key=lambda r: (r.queue_order or 0, r.created)):
        lines.setdefault(r.submitter, []).append(r)
    turn = sorted(lines, key=lambda who: (last_started.get(who, 0.0), lines[who][0].queue_order or 0))
    order = list(front)
    while lines:  # round-robin: each submitter's next run in turn
        who = turn.pop(0)
        order.append(lines[who].pop(0))
        if lines[who]:
            turn.append(who)
        else:
            del lines[who]
    return order


class RunQueue:
    def __init__(self, store: QueueStore, slots: int | None = None):
        self.store = store
        self.slots = slots if slots is not None else slots_setting()

    # --- submitting ------------------------------------------------------------------------------------------
    def submit(self, config: TrainConfig, name: str | None, source: str, submitter: str,
               waiter_pid: int | None = None, capped: bool = True, pace: StartPace = FULL_SPEED) -> str:
        """Queue a run (never refused for being busy); returns its id. waiter_pid: a process that will train
        it itself when it may start (the command line); otherwise a dispatcher starts a worker for it.
        capped: refused (ExplainedValueError) when its submitter already has STUDIO_MAX_QUEUED_PER_PERSON runs
        waiting — False for an admin's Start, and for a sweep's runs (the sweep asks for settings only while
        its submitter is under the cap: core/runs/sweeps/).
        pace: paused before its first step, or in slow motion from it."""
        needed = min(max(config.workers, 1), self.slots)  # more workers than slots: it takes the whole host
        run_id = self.store.create_run(config, name=name, source=source, status=QUEUED, exclusive=False,
                                       most_queued=max_queued_setting() if capped else None,
                                       submitter=submitter or "", queue_order=time.time(), waiter_pid=waiter_pid,
                                       slots=needed, **pace.row())  # one insert: a dispatcher never sees it half made
        self.store.log(run_id, f"queued by {submitter} ({source})" if submitter else f"queued ({source})")
        return run_id

    def cancel(self, run_id: str) -> bool:
        """Cancel a queued run (False: it is not queued any more)."""
        done = self.store.cancel_queued(run_id)
        if done:
            self.store.log(run_id, "cancelled while queued")
        return done

    def move_to_front(self, run_id: str, own_line: bool = False) -> bool:
        """Make a queued run the next to start (False: it is not queued any more); own_line: the next of its
        submitter's own runs, still taking turns with other people's."""
        done = self.store.move_to_front(run_id, own_line)
        if done:
            self.store.log(run_id, "moved to the front of its owner's runs" if own_line
                           else "moved to the front of the queue")
        return done

    # --- reading ---------------------------------------------------------------------------------------------
    def waiting(self) -> list[QueuedRun]:
        """The queued runs in start order, with their position and an estimate of when each starts."""
        state = self.store.queue_state()
        order = dispatch_order(state.queued, state.last_started)
        estimates = self._estimates(order, state.active)
        return [QueuedRun(r, i + 1, s, held) for i, (r, (s, held)) in enumerate(zip(order, estimates, strict=True))]

    def _estimates(self, order: list[Run], active: list[Run]) -> list[tuple[float | None, str | None]]:
        """Seconds until each queued run starts: the slots' timeline with the active runs' ETAs and the queued
        runs' expected durations (expected_seconds). A paused run's slot frees at no known time: a run that
        needs it has no estimate, and the paused run's name instead."""
        free_at: list[tuple[float, str]] = [
            (math.inf, r.name) if r.status == Status.PAUSED else (self._remaining(r), "")
            for r in active for _ in range(max(r.slots, 1))]
        free_at += [(0.0, "")] * max(self.slots - len(free_at), 0)
        if not free_at:  # no slot on this host (STUDIO_SLOTS=0: a Dask cluster trains them): no estimate
            return [(None, None)] * len(order)
        heapq.heapify(free_at)
        out: list[tuple[float | None, str | None]] = []
        for r in order:
            need = min(max(r.slots, 1), len(free_at))
            taken = [heapq.heappop(free_at) for _ in range(need)]
            start, holder = max(taken)
            out.append((None, holder) if math.isinf(start) else (start, None))
            for _ in taken:
                heapq.heappush(free_at, (start + self.expected_seconds(r.config), holder))
        return out

    def _remaining(self, run: Run) -> float:
        """An active run's seconds left: its ETA once it trains, else its expected length (it is starting)."""
        if run.eta is not None:
            return max(run.eta, 0.0)
        done = run.step / run.total_steps if run.total_steps else 0.0
        return self.expected_seconds(run.config) * (1.0 - min(done, 1.0))

    def expected_seconds(self, config: TrainConfig) -> float:
        """How long a run of config takes, start to end: the newest completed runs of its network (on its data
        when there are such) per epoch, times its epochs; before any, from a measured or a typical speed."""
        done = [(c, epochs, seconds) for c, epochs, seconds in self.store.recent_durations()
                if c.network == config.network]
        alike = [d for d in done if d[0].data_dir == config.data_dir] or done
        if alike:
            return statistics.median(seconds / epochs for _, epochs, seconds in alike[:5]) * config.epochs
        spec = known_network(config.network)
        speed = self._recent_speed(config.network) or (spec.fallback_samples_per_s if spec else 5_000.0)
        return config.epochs * TRAIN_IMAGES_GUESS / speed

    def _recent_speed(self, network: str) -> float | None:
        return next((speed for net, speed in self.store.recent_speeds() if net == network), None)

    # --- dispatching -----------------------------------------------------------------------------------------
    def claim_next(self, remote_slots: int = 0) -> Run | None:
        """Move the next queued run to `starting` if its slots are free (one transaction); the run, or None.

        remote_slots: runs a Dask cluster takes at once (core/runs/launch/dask_executor.py). This host's slots fill
        first; a run placed on the cluster comes back with executor 'dask' (one slot there: data-parallel runs
        and runs a waiting command line trains itself stay on this host)."""
        run_id = self.store.claim(lambda state: self._choose(state, remote_slots))
        if run_id is None:
            return None
        run = self.store.existing(run_id)
        self.store.log(run_id, "taken from the queue: starting" + (" on the Dask cluster" if run.executor else ""))
        return run

    def _choose(self, state: QueueState, remote_slots: int) -> tuple[str, str | None] | None:
        """The next run to start and where (None: this host), if it fits now."""
        order = dispatch_order(state.queued, state.last_started)
        if not order:
            return None
        head = order[0]
        here = sum(max(r.slots, 1) for r in state.active if not r.executor)
        there = sum(1 for r in state.active if r.executor)
        if here + max(head.slots, 1) <= self.slots:
            return head.id, None
        if head.slots <= 1 and not head.waiter_pid and there < remote_slots:
            return head.id, "dask"
        return None
