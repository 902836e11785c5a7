"""The dispatcher: starts queued runs when slots free, whether or not a browser is open.

Every app server runs one (in a thread, from its start) and so does every command line waiting for its run;
a lease in the store (a row with an owner and an expiry, renewed every tick) lets one of them act at a time
for the whole store (every app server and host on one database),
and another takes over within LEASE_S when its owner dies (even by SIGKILL). Starting a run is a transaction
(RunQueue.claim_next), so even two acting at once could not start one run twice."""
from __future__ import annotations

import logging
import contextlib
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING
from collections.abc import Callable

from core.runs import sweeps as sweep
from core.runs.processes import pid_alive
from core.runs.run_queue import RunQueue
from core.runs.rows import Run
from core.runs.store import RunStore
from core.runs.store.class_records import KEEP_S

if TYPE_CHECKING:
    from core.runs.launch.dask_executor import DaskExecutor

__all__ = ["Dispatcher", "TICK_S", "LEASE_S"]

_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr

TICK_S = 0.5    # a freed slot is filled within this (plus a process start)
LEASE_S = 5.0   # a dispatcher silent this long is taken over
REPEAT_S = 60.0  # the same failure is said again this often while it lasts
WIPE_EVERY_S = 60.0  # how often the acting dispatcher wipes a lesson's drawings older than class_records.KEEP_S


class Dispatcher:
    def __init__(self, store: RunStore, spawn: Callable[[RunStore, str], None], queue: RunQueue | None = None,
                 name: str | None = None, executor: "DaskExecutor | None" = None):
        self.store = store
        self.executor = executor  # more machines (core/runs/launch/dask_executor.py), or None: this host only
        self.queue = queue or RunQueue(store)
        self.spawn = spawn
        self.owner = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"  # the lease's row
        self._wiped_at = 0.0  # when this dispatcher last wiped old lessons

    def holds_lease(self) -> bool:
        """Take or renew the lease; whether this dispatcher may act now."""
        return self.store.take_lease(self.owner, LEASE_S)

    def release(self) -> None:
        self.store.release_lease(self.owner)

    def tick(self) -> list[Run]:
        """One round: if this dispatcher holds the lease, start every queued run that fits. The runs started."""
        if not self.holds_lease():
            return []
        self.store.reconcile()  # a dead run's slot frees
        self._wipe_old_lessons()
        sweep.advance_all(self.store)  # sweeps tell Optuna what ended and queue their next settings
        remote_slots = 0
        if self.executor is not None:
            self.executor.attach(self.store)  # remote runs this process does not follow yet (after a restart)
            self.executor.watch(self.store)   # remote runs recording into a team's database: lost, silent, ended
            remote_slots = self.executor.capacity()
        started = []
        while (run := self.queue.claim_next(remote_slots)) is not None:
            if run.executor and self.executor is not None:
                try:
                    self.executor.submit(self.store, run)
                except Exception:
                    break  # back in the queue, the reason in its log; the cluster is tried again next tick
            elif run.waiter_pid and pid_alive(run.waiter_pid):
                self.store.update(run.id, pid=run.waiter_pid)  # the waiter trains it once it sees its own pid
                self.store.log(run.id, f"handed to the waiting command line (pid {run.waiter_pid})")
            else:
                with contextlib.suppress(OSError):  # spawn marked the run failed with the reason; the next may start
                    self.spawn(self.store, run.id)
            started.append(run)
        return started

    def _wipe_old_lessons(self) -> None:
        """A class's drawings go KEEP_S after they were made, even when nobody opens the lesson again."""
        now = time.time()
        if now - self._wiped_at >= WIPE_EVERY_S:
            self.store.wipe_class(before=now - KEEP_S)
            self._wiped_at = now

    def run_forever(self, stop: threading.Event) -> None:
        """Tick until stop is set; then hand the lease back at once."""
        try:
            said, said_at = "", 0.0
            while not stop.is_set():
                try:
                    self.tick()
                    said = ""
                except Exception as e:  # a locked database, a full disk: log it and try again next tick
                    line = f"dispatcher {self.owner}: {type(e).__name__}: {e}"
                    if line != said or time.monotonic() - said_at > REPEAT_S:  # once, not every tick
                        _LOG.warning("%s%s", line, " (retrying every tick)" if line != said else " (still)")
                        said, said_at = line, time.monotonic()
                stop.wait(TICK_S)
        finally:
            self.release()

    def start_thread(self) -> tuple[threading.Thread, threading.Event]:
        stop = threading.Event()
        thread = threading.Thread(target=self.run_forever, args=(stop,), daemon=True, name="studio-dispatcher")
        thread.start()
        return thread, stop
