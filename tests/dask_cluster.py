"""A Dask cluster on 127.0.0.1 for tests: a scheduler and workers as the docs start them (every address bound
to 127.0.0.1, never another of the machine's), each worker in a process group of its own so that a test can
kill it outright; and a dispatcher that sends every queued run to the cluster (no local slot)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from core import PROJECT_ROOT
from core.runs.dask_executor import DaskExecutor
from core.runs.dispatcher import Dispatcher
from core.runs.launcher import spawn
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore
from tests.helpers import wait_for

DASK = Path(sys.executable).with_name("dask")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, folder: Path, workers: int = 2):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), DASK_DISTRIBUTED__WORKER__DAEMON="False")
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.scheduler = self._start("scheduler", [str(DASK), "scheduler", "--host", "127.0.0.1", "--port",
                                                   self.address.rsplit(":", 1)[1], "--dashboard-address", "127.0.0.1:0"])
        self.workers: dict[str, subprocess.Popen] = {}
        for i in range(workers):
            address = f"tcp://127.0.0.1:{free_port()}"
            self.workers[address] = self._start(f"worker{i}", [
                str(DASK), "worker", self.address, "--host", "127.0.0.1", "--worker-port", address.rsplit(":", 1)[1],
                "--nanny-port", str(free_port()), "--dashboard-address", "127.0.0.1:0", "--nthreads", "1",
                "--resources", "train=1", "--local-directory", str(folder / f"worker{i}")])
        from distributed import Client
        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=60)

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        return subprocess.Popen(argv, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def kill_worker(self, address: str) -> None:
        """SIGKILL a worker and its nanny: the machine as good as switched off."""
        os.killpg(self.workers.pop(address).pid, signal.SIGKILL)

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


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
    time.sleep(0)
