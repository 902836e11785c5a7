"""The Dask tasks that train one run on a worker machine (started by core/runs/launch/dask_executor.py).

The worker machine needs this project installed, nothing of the app's files: the run's data arrives with the
task. Two ways, by the store's database:
- a team's database server (`train_on_database`): the worker machine opens the same database, and the ordinary
  worker process records into it directly, reads its requests there and keeps its checkpoints there
  (core/runs/store/artifacts.py); a scratch folder holds the data and this machine's copy of the files.
- a SQLite store on the app's host (`train_remotely`): the run's row and (for a resumed run) its checkpoint and
  metrics arrive with the task too; the task plants them in a scratch store, starts the worker process against it
  and relays: every RELAY_EVERY_S what the scratch store gained goes to the app through a Dask queue
  (core/runs/worker/mirror.py), and the app's pause/stop/pacing requests come back through another.
The scratch folder is deleted at the end.

A Dask worker that dies takes its training process with it (PR_SET_PDEATHSIG), and Dask would run the task
again elsewhere: that second attempt finds its claim already taken and returns at once, so a run never trains
twice; the app marks it interrupted, resumable from the last checkpoint it received.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.messages import Message
from core.runs.worker import mirror
from core.runs.processes import kill_tree
from core.runs.store import RunStore
from core.runtime import child_environment

__all__ = ["train_remotely", "train_on_database", "events_queue_name", "control_queue_name",
           "RELAY_EVERY_S", "QUIET_BEAT_S"]

RELAY_EVERY_S = 0.25  # how often the scratch store is read and sent (the page's refresh is slower)
QUIET_BEAT_S = 1.0    # with nothing new, an empty delta at least this often: the app's sign of life
APP_SILENT_S = 30.0   # no word from the app this long (it died): the run stops here; the app marks it interrupted
STOP_GRACE_S = 5.0    # as for a local run (core/runs/launch/launcher.py): then the process is ended mid-step
PR_SET_PDEATHSIG = 1


def events_queue_name(key: str) -> str:
    return f"{key}-events"


def control_queue_name(key: str) -> str:
    return f"{key}-control"


def train_remotely(job: dict, data: dict[str, bytes]) -> dict:
    """Train the run on this machine, relaying to the app; returns how the worker process ended.

    job: {"key": the Dask task's key (it names the queues and the claim), "seed": mirror.seed_rows of the app's
    store}; data: the run's MNIST files by path in its folder (train/..., test/...). Plain dicts, so that the
    scheduler can pass them on without this project (core/runs/dask_entry.py)."""
    from distributed import Event, Queue, get_worker  # deferred: only a Dask worker runs this
    key = job["key"]
    claim = Event(f"{key}-claimed")
    if claim.is_set():
        return {"outcome": "abandoned"}  # an earlier attempt started it on a worker that died
    claim.set()
    events, control = Queue(events_queue_name(key)), Queue(control_queue_name(key))
    with tempfile.TemporaryDirectory(prefix="studio-remote-") as scratch:
        store, run_id = _plant(Path(scratch), job, data)
        events.put({"hello": {"worker": get_worker().address, "host": os.uname().nodename}})
        proc = _spawn(store, run_id)
        try:
            returncode = _relay(store, run_id, proc, events, control)
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
    return {"outcome": "ended", "returncode": returncode}


def train_on_database(job: dict, data: dict[str, bytes]) -> dict:
    """Train the run on this machine, recording straight into the team's database; returns how the worker
    process ended. job: {"key": the task's key (it names the claim), "run_id", "database_url"}; data: as for
    train_remotely."""
    from distributed import Event, get_worker  # deferred: only a Dask worker runs this
    claim = Event(f"{job['key']}-claimed")
    if claim.is_set():
        return {"outcome": "abandoned"}  # an earlier attempt started it on a worker that died
    claim.set()
    run_id = job["run_id"]
    with tempfile.TemporaryDirectory(prefix="studio-remote-") as scratch:
        folder = _write_data(Path(scratch), data)
        store = RunStore(Path(scratch) / "store", job["database_url"])
        store.log(run_id, f"training on Dask worker {get_worker().address} ({os.uname().nodename})")
        proc = _spawn(store, run_id, data_dir=folder)
        try:
            returncode = proc.wait()
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
        if returncode != 0:  # what the process said before it could record it (a crash's traceback)
            tail = store.log_path(run_id).read_text(errors="replace").strip().splitlines()[-5:]
            store.log(run_id, "the worker process on {} ended with exit code {}: {}".format(
                os.uname().nodename, returncode, " | ".join(tail) or "no output"))
    return {"outcome": "ended", "returncode": returncode}


def _write_data(scratch: Path, data: dict[str, bytes]) -> Path:
    folder = scratch / "data"
    for rel, content in data.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return folder


def _plant(scratch: Path, job: dict, data: dict[str, bytes]) -> tuple[RunStore, str]:
    folder = _write_data(scratch, data)
    config = TrainConfig.from_json(job["seed"]["run"]["config"]).with_(data_dir=str(folder))
    store = RunStore(scratch / "store")
    return store, mirror.plant_seed(store, job["seed"], config.to_json())


def _die_with_parent() -> None:
    """In the child, before exec: be killed when the Dask worker that started it dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _spawn(store: RunStore, run_id: str, data_dir: Path | None = None) -> subprocess.Popen:
    env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                            **store.command_env())
    extra = ["--data-dir", str(data_dir)] if data_dir else []
    with open(store.log_path(run_id), "ab") as log:  # the child keeps its own copy of the file
        # preexec_fn runs only prctl (async-signal-safe) between fork and exec
        return subprocess.Popen([sys.executable, "-m", "core.cli.worker", run_id, *store.command_args(), *extra],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=_die_with_parent)  # noqa: PLW1509


def _relay(store: RunStore, run_id: str, proc: subprocess.Popen, events, control) -> int:
    cursor = mirror.Cursor.at_end(store, run_id)
    cursor.run = {}  # send the run's fields once in full
    stop_asked, last_sent, app_heard = None, 0.0, time.monotonic()
    while True:
        ended = proc.poll() is not None
        for message in _drain(control):
            app_heard = time.monotonic()
            stop_asked = _follow(store, run_id, message, stop_asked)
        if not ended and time.monotonic() - app_heard > APP_SILENT_S:
            kill_tree(proc.pid)  # nobody records it any more: free this worker
            return proc.wait()
        if stop_asked is not None and not ended and time.monotonic() - stop_asked > STOP_GRACE_S:
            kill_tree(proc.pid)
            store.finish(run_id, "stopped", Message("terminated_mid_step"))
            ended = proc.wait() is not None
        d = mirror.delta(store, run_id, cursor)
        if ended or not mirror.is_empty(d) or time.monotonic() - last_sent >= QUIET_BEAT_S:
            events.put(d)
            last_sent = time.monotonic()
        if ended:
            events.put({"end": proc.returncode})
            return proc.returncode
        time.sleep(RELAY_EVERY_S)


def _drain(queue) -> list[dict]:
    out = []
    while queue.qsize():
        out.append(queue.get())
    return out


def _follow(store: RunStore, run_id: str, message: dict, stop_asked: float | None) -> float | None:
    """Write one of the app's requests into the scratch store, where the worker process reads it."""
    fields = {k: v for k, v in message.items() if k in ("request", "step_delay")}
    if fields:
        store.update(run_id, **fields)
    for setting, value in message.get("asked", {}).items():  # the live settings asked for (RunStore.ask)
        store.ask(run_id, setting, value)
    if fields.get("request") == "stop" and stop_asked is None:
        return time.monotonic()
    return stop_asked
