"""Start and stop training worker processes for runs in the store (used by the dashboard)."""
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
from core.runs.rows import RequestNotice
from core.runs.store import RunStore

STOP_GRACE_S = 5.0  # a stop request is honoured between steps; after this the process is terminated


def start(store: RunStore, config: TrainConfig, name: str | None = None, source: str = "dashboard") -> str:
    """Create a run (RunBusy if one is training) and start its worker; returns the run id."""
    run_id = store.create_run(config, name=name, source=source)
    _spawn(store, run_id)
    return run_id


def resume(store: RunStore, run_id: str) -> str:
    """Continue a stopped, failed or interrupted run from its last checkpoint in a new worker (RunBusy if
    another run trains, ValueError if this one cannot be resumed)."""
    store.prepare_resume(run_id)
    _spawn(store, run_id)
    return run_id


def _spawn(store: RunStore, run_id: str) -> None:
    log = open(store.log_path(run_id), "ab")
    env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "core.worker", run_id, "--store", str(store.root)],
                                cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        store.finish(run_id, "failed", Message("process_not_started", {"why": str(e)}))
        raise
    finally:
        log.close()
    store.update(run_id, pid=proc.pid)
    # Reap the child when it ends, so that it does not linger as a zombie that looks alive.
    threading.Thread(target=proc.wait, daemon=True, name=f"reap-{run_id}").start()


def stop(store: RunStore, run_id: str, grace_s: float = STOP_GRACE_S) -> RequestNotice:
    """Ask the run to stop; if its process has not ended after grace_s, terminate it (even mid-step)."""
    message = store.request(run_id, "stop")
    run = store.get(run_id)
    if run is None or not run.active or run.pid is None:
        return message

    def enforce(pid=run.pid):
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
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
        current = store.get(run_id)
        if current is not None and current.active:
            store.finish(run_id, "stopped", Message("terminated_mid_step"))

    threading.Thread(target=enforce, daemon=True, name=f"stop-{run_id}").start()
    return message
