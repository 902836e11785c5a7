"""A Dask cluster on this machine, every address bound to 127.0.0.1: a scheduler and workers started as
docs/queue.md starts them, each worker in a process group of its own (so that it can be killed outright). For
trying Dask executors on one machine, the tests and the benchmarks:

    .venv/bin/python -m core.runs.launch.dask_local --workers 2     # prints the address for STUDIO_DASK_SCHEDULER
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import PROJECT_ROOT
import contextlib

__all__ = ["Cluster", "free_port"]

DASK = Path(sys.executable).with_name("dask")
# How long the workers may take to start: importing distributed and the studio takes a few seconds alone, and
# over a minute on two cores while other tests train beside it (CI once had 1 of 2 after 60 s).
WORKERS_ARRIVE_S = 240.0


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
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start("scheduler", [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", port,
                                                   "--dashboard-address", "127.0.0.1:0"])
        self.workers: dict[str, subprocess.Popen] = {}
        for i in range(workers):
            address = f"tcp://127.0.0.1:{free_port()}"
            self.workers[address] = self._start(f"worker{i}", [
                str(DASK), "worker", self.address, "--host", "127.0.0.1", "--worker-port", address.rsplit(":", 1)[1],
                "--nanny-port", str(free_port()), "--dashboard-address", "127.0.0.1:0", "--nthreads", "1",
                "--resources", "train=1", "--local-directory", str(folder / f"worker{i}")])
        from distributed import Client  # deferred: like every Dask import (core/runs/launch/dask_executor.py)
        with Client(self.address, timeout=60) as client:
            try:
                client.wait_for_workers(workers, timeout=WORKERS_ARRIVE_S)
            except Exception as e:  # distributed's WorkerStartTimeoutError: say what each worker logged
                logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}"
                                  for p in sorted(self.folder.glob("worker*.log")))
                self.close()
                raise RuntimeError(f"the Dask workers did not all arrive within {WORKERS_ARRIVE_S:.0f} s: {e}\n"
                                   f"{logs}") from e

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        with open(self.folder / f"{name}.log", "wb") as log:  # the child keeps its own copy of the file
            return subprocess.Popen(argv, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def kill_worker(self, address: str) -> None:
        """SIGKILL a worker and its nanny: the machine as good as switched off."""
        os.killpg(self.workers.pop(address).pid, signal.SIGKILL)

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Start a Dask scheduler and workers on 127.0.0.1 until Ctrl-C.")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="studio-dask-")), args.workers)
    print(f"STUDIO_DASK_SCHEDULER={cluster.address}  ({args.workers} workers; logs in {cluster.folder})", flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        return 0
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
