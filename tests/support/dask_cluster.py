"""For the Dask tests: a dispatcher that sends every queued run to a cluster on 127.0.0.1 (no local slot), and
where a run trained. The cluster itself: core/runs/launch/dask_local.py."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from core.runs.launch.dask_executor import DaskExecutor
from core.runs.launch.dispatcher import Dispatcher
from core.runs.launch.launcher import spawn
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore
from tests.support.helpers import wait_for


@contextmanager
def dispatching(store: RunStore, address: str):
    """A dispatcher thread that sends queued runs to the cluster; its executor (relays) while it runs."""
    executor = DaskExecutor(address)
    dispatcher = Dispatcher(store, spawn, queue=RunQueue(store, slots=0), executor=executor)
    thread, stop = dispatcher.start_thread()
    try:
        yield executor
    finally:
        stop.set()
        thread.join(10)
        executor.close()


def trained_on(store: RunStore, run_id: str) -> str | None:
    """The Dask worker a run trained on, from its log."""
    for line in store.logs(run_id):
        if line.message.startswith("training on Dask worker "):
            return line.message.split()[4]
    return None


def processes_of(run_id: str) -> list[int]:
    """Processes on this machine whose command line names the run (its training process, wherever it was)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if run_id.encode() in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


def wait_until_gone(run_id: str, timeout: float = 10.0) -> None:
    wait_for(lambda: not processes_of(run_id), timeout, f"the training process of {run_id} to end")
