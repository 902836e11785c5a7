"""Queue runs and start and stop their worker processes (used by the dashboard and the dispatcher)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.runtime import child_environment
from core.messages import Message
from core.runs.processes import pid_alive
from core.runs.rows import FULL_SPEED, RequestNotice, StartPace
from core.runs.launch.dask_executor import DaskExecutor, scheduler_setting
from core.runs.launch.dispatcher import Dispatcher
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore
from core.runs.launch.priority import lower_priority
from core.runs.launch.warm_pool import REUSED_IDLE_S, WarmPool, reuse_wanted, warm_wanted

STOP_GRACE_S = 5.0  # a stop request is honoured between steps; after this the process is terminated


_dispatchers: dict[str, Dispatcher] = {}
_pools: dict[str, WarmPool] = {}  # warm workers, kept by the app server only (serve)
_serving: dict[str, threading.Event] = {}
_lock = threading.Lock()


def dispatcher_for(store: RunStore) -> Dispatcher:
    """This process's dispatcher for the store (one per store, so that its lease has one owner here)."""
    with _lock:
        if store.key not in _dispatchers:
            address = scheduler_setting()
            executor = DaskExecutor(address) if address else None
            _dispatchers[store.key] = Dispatcher(store, spawn, executor=executor)
        return _dispatchers[store.key]


def serve(store: RunStore) -> None:
    """Keep dispatching for the store in a thread of this process (idempotent): the app server does this
    from its start, so queued runs start whether or not a browser is open."""
    with _lock:
        if store.key in _serving:
            return
    dispatcher = dispatcher_for(store)
    with _lock:
        pool = _pools.get(store.key)
        if warm_wanted() and (pool is None or not pool.ahead):
            pool = _pools[store.key] = pool or WarmPool(store)
            pool.fill()
        if store.key not in _serving:
            _serving[store.key] = dispatcher.start_thread()[1]


def want_warm_worker(store: RunStore, config: TrainConfig) -> None:
    """A page shows these settings: this server's waiting worker of their network compiles their graphs ahead
    (WarmPool.want; nothing where this process keeps no workers ahead)."""
    with _lock:
        pool = _pools.get(store.key)
    if pool is not None:
        pool.want(config)


def shutdown(store: RunStore) -> None:
    """Stop this process's dispatching for the store and let its warm workers go (tests; a server's end)."""
    with _lock:
        stop_event, pool = _serving.pop(store.key, None), _pools.pop(store.key, None)
    if stop_event is not None:
        stop_event.set()
    if pool is not None:
        pool.close()


def start(store: RunStore, config: TrainConfig, name: str | None = None, source: str = "dashboard",
          submitter: str = "", capped: bool = True, pace: StartPace = FULL_SPEED) -> str:
    """Queue a run and start it now if a slot is free (and this process may dispatch); returns its id. Never
    refused for being busy: it waits its turn (core/runs/run_queue.py); refused when its submitter already has
    too many waiting (capped: not for an admin)."""
    run_id = RunQueue(store).submit(config, name, source, submitter, capped=capped, pace=pace)
    dispatcher_for(store).tick()
    return run_id


def resume(store: RunStore, run_id: str) -> str:
    """Queue a stopped, failed or interrupted run again; it continues from its last checkpoint when its turn
    comes (ValueError if it cannot be resumed)."""
    store.prepare_resume(run_id)
    dispatcher_for(store).tick()
    return run_id


def spawn(store: RunStore, run_id: str) -> None:
    """Start the worker process of a run the queue handed out: a warm one waiting for its network when this
    process's pool has one (core/runs/launch/warm_pool.py), else a new one, which the pool keeps for the next
    run of its network once this one has completed; a data-parallel run's own coordinator."""
    run, pool = store.get(run_id), _pool(store)
    proc = None
    if pool is not None and run is not None and run.config.workers <= 1:
        proc = pool.take(run.config.network, run_id)
        if proc is not None:
            store.log(run_id, f"handed to a warm worker (pid {proc.pid}, MindSpore already loaded)")
        else:
            proc = _started(store, run_id, lambda: pool.start_for(run.config.network, run_id))
    if proc is None:
        proc = _started(store, run_id, lambda: _start_worker(store, run_id))
    store.update(run_id, pid=proc.pid)
    # Reap the child when it ends, so that it does not linger as a zombie that looks alive.
    threading.Thread(target=proc.wait, daemon=True, name=f"reap-{run_id}").start()


def _pool(store: RunStore) -> WarmPool | None:
    """This process's pool of workers for the store: the app server's (serve), else one that keeps only the
    workers that finished a run, for a while (None: STUDIO_REUSE_WORKERS=0 and no server pool)."""
    with _lock:
        if store.key not in _pools and reuse_wanted():
            _pools[store.key] = WarmPool(store, ahead=False, idle_s=REUSED_IDLE_S)
        return _pools.get(store.key)


def _started(store: RunStore, run_id: str, start) -> subprocess.Popen:
    try:
        return start()
    except OSError as e:
        store.finish(run_id, "failed", Message("process_not_started", {"why": str(e)}))
        raise


def _start_worker(store: RunStore, run_id: str) -> subprocess.Popen:
    env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                            **store.command_env())
    with open(store.log_path(run_id), "ab") as log:  # the child keeps its own copy of the file
        proc = subprocess.Popen([sys.executable, "-m", "core.cli.worker", run_id, *store.command_args()],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    lower_priority(proc.pid)
    return proc


def stop(store: RunStore, run_id: str, grace_s: float = STOP_GRACE_S) -> RequestNotice:
    """Ask the run to stop; if its process has not ended after grace_s, terminate it (even mid-step)."""
    message = store.request(run_id, "stop")
    run = store.get(run_id)
    if run is None or not run.active or run.pid is None:
        return message

    def enforce(pid=run.pid):
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            current = store.get(run_id)
            if not pid_alive(pid) or current is None or not current.active:
                return  # ended (a worker whose run ended may be training the next one: never signalled then)
            time.sleep(0.1)
        for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 0.0)):
            try:
                os.killpg(pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            t = time.monotonic() + wait
            while time.monotonic() < t and pid_alive(pid):
                time.sleep(0.1)
            if not pid_alive(pid):
                break
        store.end_if_active(run_id, "stopped", Message("terminated_mid_step"))

    threading.Thread(target=enforce, daemon=True, name=f"stop-{run_id}").start()
    return message
