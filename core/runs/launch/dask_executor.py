"""More machines through Dask distributed: queued runs train on Dask workers when STUDIO_DASK_SCHEDULER is set.

    PYTHONPATH=. .venv/bin/dask scheduler                       # in this project's folder, on one host (port 8786)
    PYTHONPATH=. .venv/bin/dask worker tcp://HOST:8786 --nthreads 1 --resources train=1   # on each machine
    STUDIO_DASK_SCHEDULER=tcp://HOST:8786 ./run.sh              # the app

The scheduler unpickles every task, so it too runs where this project is installed (docs/queue.md).
The dispatcher (core/runs/launch/dispatcher.py) fills this host's slots first, then one run per free `train`
resource of the cluster. A remote run trains in core/runs/worker/remote_run.py. Data-parallel runs and runs a waiting
command line trains itself stay here.

With a team's database server, the remote run records straight into it (as a local run does) and this side
only watches its task (Watch). With a SQLite store, which only this host can open, a Relay thread per run writes
what comes back into the app's store and sends the run's requests there (remote machines need none of its
files either way).

Liveness: a remote run's heartbeat (direct) or its relay's messages (SQLite) come at least every 2 s. Silent for
SILENT_S, or its task lost, it is marked interrupted, resumable from its last checkpoint. The app restarting
loses nothing: the next dispatcher re-attaches to runs still training (their deltas wait in the Dask queue).
"""
from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any

from core.messages import Message
from core.runs.worker import mirror
from core.runs.launch.dask_data import ScatteredData
from core.runs.worker.remote_run import control_queue_name, events_queue_name, train_on_database, train_remotely
from core.runs.rows import Run
from core.runs.store import RunStore
from core.runs.sweeps.study import TrialReporter
from core.runs.store.metric_records import epoch_from_row

__all__ = ["SCHEDULER_ENV", "DaskExecutor", "scheduler_setting", "SILENT_S"]

_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr

SCHEDULER_ENV = "STUDIO_DASK_SCHEDULER"
TRAIN_RESOURCE = "train"
LOST_GRACE_S = 5.0  # a lost task's run still beating within this (every 2 s) is still training
SILENT_S = 8.0          # a remote run silent this long is interrupted (the issue asks within 10 s)
FIRST_CONTACT_S = 60.0  # from submission to its first word: the task may wait for its data to travel
CAPACITY_EVERY_S = 2.0  # the cluster's workers are asked at most this often
FORWARDED = ("request", "step_delay")  # sent when they change; the requests table's rows are taken


def scheduler_setting() -> str | None:
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    return address or None


class DaskExecutor:
    def __init__(self, address: str):
        self.address = address
        self._client: Any = None  # a distributed.Client once asked for (imported late)
        self._capacity, self._asked = 0, 0.0
        self._lock = threading.Lock()
        self.relays: dict[str, "Relay"] = {}
        self.watches: dict[str, "Watch"] = {}
        self.data = ScatteredData()

    def client(self):
        with self._lock:
            if self._client is None:
                from distributed import Client  # deferred: only a server with Dask configured needs it
                self._client = Client(self.address, timeout=5, set_as_default=False)
            return self._client

    def capacity(self) -> int:
        """How many runs the cluster takes at once (its workers' `train` resources); 0 while unreachable."""
        if time.monotonic() - self._asked < CAPACITY_EVERY_S:
            return self._capacity
        self._asked = time.monotonic()
        try:
            workers = self.client().scheduler_info(n_workers=-1)["workers"].values()
            self._capacity = int(sum(w.get("resources", {}).get(TRAIN_RESOURCE, 0) for w in workers))
        except Exception as e:  # unreachable: this host's slots go on; say why once a round
            _LOG.warning("Dask scheduler %s: %s: %s", self.address, type(e).__name__, e)
            self._capacity = 0
        return self._capacity

    def submit(self, store: RunStore, run: Run) -> None:
        """Send a claimed run to the cluster and relay it. On failure it goes back to the queue."""
        key = f"studio-run-{run.id}-{uuid.uuid4().hex[:8]}"
        try:
            if run.checkpoint_epoch is not None:  # a resumed run: forget the unfinished epoch here too
                store.truncate_after(run.id, run.checkpoint_epoch)
            client = self.client()
            data = self.data.future(client, run.config.data_dir)  # sent once for many trials
            if store.shares_database:
                future = client.submit(train_on_database, {"key": key, "run_id": run.id, "database_url": store.url},
                                       data, key=key, resources={TRAIN_RESOURCE: 1}, pure=False)
            else:
                future = client.submit(train_remotely, {"key": key, "seed": mirror.seed_rows(store, run.id)},
                                       data, key=key, resources={TRAIN_RESOURCE: 1}, pure=False)
        except Exception as e:
            store.update(run.id, status="queued", executor=None)
            store.log(run.id, f"could not be sent to the Dask cluster ({type(e).__name__}: {e}); back in the queue")
            raise
        store.update(run.id, executor=f"dask:{key}", heartbeat=time.time())
        store.log(run.id, f"sent to the Dask cluster at {self.address}")
        if store.shares_database:
            self.watches[run.id] = Watch(run.id, future, data)
        else:
            self._relay(store, run.id, key, future, data)

    def attach(self, store: RunStore) -> None:
        """Watch or relay the remote runs still training that nothing here follows (after a restart, or when
        this app server took the dispatcher's lease over from another)."""
        for run in store.list_runs():
            if not (run.active and run.executor and run.executor.startswith("dask:")):
                continue
            if run.id in self.relays or run.id in self.watches:
                continue
            from distributed import Future  # deferred: as in client()
            key = run.executor.split(":", 1)[1]
            if store.shares_database:
                self.watches[run.id] = Watch(run.id, Future(key, self.client()), None)
                store.log(run.id, "watched from this app server (it took over dispatching)")
            else:
                self._relay(store, run.id, key, Future(key, self.client()), None)
                store.log(run.id, "relay re-attached (the app restarted)")

    def watch(self, store: RunStore) -> None:
        """One look at every remote run recording into the team's database (see Watch)."""
        for run_id, watch in list(self.watches.items()):
            if watch.look(store):
                del self.watches[run_id]

    def _relay(self, store: RunStore, run_id: str, key: str, future, data) -> None:
        relay = Relay(self, store, run_id, key, future, data)
        self.relays[run_id] = relay
        relay.start()

    def close(self) -> None:
        for relay in list(self.relays.values()):
            relay.done.set()
        self.data.clear()
        if self._client is not None:
            self._client.close()


class Watch:
    """A remote run that records into the team's database itself: this side only notices when its task is
    lost (worker died), ends without the run saying how, or its heartbeat stops for SILENT_S."""

    def __init__(self, run_id: str, future, data):
        self.run_id, self.future, self.data = run_id, future, data  # data held: it lives while the run needs it
        self.since = time.time()

    def look(self, store: RunStore) -> bool:
        """Whether the run has ended (marked here, or by itself)."""
        status = self.future.status  # before the run: a task that has finished has recorded how the run ended
        run = store.get(self.run_id)
        if run is None or not run.active:
            return True
        if status == "error":
            why = f"{type(self.future.exception()).__name__}: {self.future.exception()}"
            return self._end(store, "interrupted", Message("remote_lost", {"why": why}))
        lost = status in ("cancelled", "lost") or (status == "finished" and
                                                    self.future.result().get("outcome") == "abandoned")
        if lost and time.time() - (run.heartbeat or 0.0) > LOST_GRACE_S:
            # the run's own heartbeat decides: Dask also reschedules a task whose worker it only thought gone (a
            # loaded machine), and the first attempt may still be training and recording
            return self._end(store, "interrupted", Message("remote_worker_died"))
        if lost:
            return False
        if status == "finished":
            return self._end(store, "failed", Message("remote_exit", {"code": self.future.result().get("returncode")}))
        heard = max(run.heartbeat or 0.0, self.since)
        if time.time() - heard > (SILENT_S if run.heartbeat and run.heartbeat > self.since else FIRST_CONTACT_S):
            self.future.cancel()
            return self._end(store, "interrupted", Message("remote_silent", {"s": round(SILENT_S)}))
        return False

    def _end(self, store: RunStore, status: str, said: Message) -> bool:
        if store.end_if_active(self.run_id, status, said):
            store.log(self.run_id, f"{status}: {said}")
        return True


class Relay(threading.Thread):
    """Writes what a remote run sends into the store and sends it the run's requests, until it ends."""

    def __init__(self, executor: DaskExecutor, store: RunStore, run_id: str, key: str, future, data):
        super().__init__(daemon=True, name=f"relay-{run_id}")
        from distributed import Queue  # deferred: as in DaskExecutor.client()
        self.executor, self.store, self.run_id, self.key = executor, store, run_id, key
        self.future, self.data = future, data  # held: the scattered data lives while a run needs it
        client = executor.client()
        self.events = Queue(events_queue_name(key), client=client)
        self.control = Queue(control_queue_name(key), client=client)
        self.done = threading.Event()
        self.sent: dict = {}
        self.beat = 0.0
        self.pruning: TrialReporter | None = None

    def run(self) -> None:
        try:
            self._pruning()
            self._loop()
        except Exception as e:
            self._end("interrupted", Message("remote_lost", {"why": f"{type(e).__name__}: {e}"}))
        finally:
            self.executor.relays.pop(self.run_id, None)

    def _pruning(self) -> None:
        """The app has the sweep's study: it decides on pruning, the remote run obeys."""
        run = self.store.get(self.run_id)
        if run is not None and TrialReporter.wanted(self.store, run):
            self.pruning = TrialReporter(self.store, run)

    def _loop(self) -> None:
        heard, spoken = time.monotonic(), False
        while not self.done.is_set():
            for message in self._receive():
                heard, spoken = time.monotonic(), True
                if "hello" in message:
                    self.store.log(self.run_id, "training on Dask worker {worker} ({host})".format(**message["hello"]))
                elif "end" in message:
                    return self._ended(message["end"])
                else:
                    self._apply(message)
            self._forward()
            if self.future.status == "error":  # e.g. the scheduler or worker could not import this project
                why = f"{type(self.future.exception()).__name__}: {self.future.exception()}"
                return self._end("interrupted", Message("remote_lost", {"why": why}))
            if self.future.status in ("cancelled", "lost") or (
                    self.future.done() and self.future.result().get("outcome") == "abandoned"):
                return self._end("interrupted", Message("remote_worker_died"))
            if time.monotonic() - heard > (SILENT_S if spoken else FIRST_CONTACT_S):
                self.future.cancel()
                return self._end("interrupted", Message("remote_silent", {"s": round(SILENT_S)}))

    def _receive(self) -> list[dict]:
        """What arrived (a batch get does not wait: with nothing there, wait a little and look again)."""
        got = list(self.events.get(batch=True) or [])
        if not got:
            self.done.wait(0.2)
        return got

    def _apply(self, delta: dict) -> None:
        mirror.apply(self.store, self.run_id, delta, time.time())
        if self.pruning is not None and "epochs" in delta["rows"]:
            block = delta["rows"]["epochs"]
            for values in block["values"]:
                row = dict(zip(block["columns"], values, strict=False))
                row.pop("run_id", None)
                self.pruning.on_epoch(epoch_from_row(row))

    def _forward(self) -> None:
        """The run's requests, from the store to the remote run (what changed; the live settings asked for once,
        as one dict)."""
        run, asked = self.store.get(self.run_id), self.store.requests(self.run_id)
        if run is None or asked is None:
            return
        message: dict = {k: getattr(run, k) for k in FORWARDED if self.sent.get(k) != getattr(run, k)}
        if asked.asked:
            message["asked"] = asked.asked
            for setting, value in asked.asked.items():
                self.store.take(self.run_id, setting, value)
        if message or time.monotonic() - self.beat >= 1.0:  # an empty message: the app's sign of life
            self.control.put(message)
            self.sent.update({k: v for k, v in message.items() if k in FORWARDED})
            self.beat = time.monotonic()

    def _ended(self, returncode: int) -> None:
        run = self.store.get(self.run_id)
        if self.pruning is not None and self.pruning.pruned and run is not None and run.status == "stopped":
            self.store.finish(self.run_id, "pruned", Message("pruned_by_sweep"))
        elif run is not None and run.active:  # the process ended without recording how
            self._end("failed", Message("remote_exit", {"code": returncode}))
        self.store.log(self.run_id, f"the remote worker process ended (exit code {returncode})")

    def _end(self, status: str, said: Message) -> None:
        if self.store.end_if_active(self.run_id, status, said):
            self.store.log(self.run_id, f"{status}: {said}")
