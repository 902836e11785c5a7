"""A Dask cluster on this machine, every address bound to 127.0.0.1: a scheduler and workers started as
docs/queue.md starts them, each worker in a process group of its own (so that it can be killed outright). For
trying Dask executors on one machine, the tests and the benchmarks:

    .venv/bin/python -m core.runs.launch.dask_local --workers 2     # prints the address for STUDIO_DASK_SCHEDULER
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import PROJECT_ROOT
import contextlib

__all__ = ["Cluster"]

DASK = Path(sys.executable).with_name("dask")
# How long the workers may take to start: importing distributed and the studio takes a few seconds alone, and
# over a minute on two cores while other tests train beside it (CI once had 1 of 2 after 60 s).
WORKERS_ARRIVE_S = 240.0


class Cluster:
    def __init__(self, folder: Path, workers: int = 2):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), DASK_DISTRIBUTED__WORKER__DAEMON="False")
        # Every process binds a port of its own choosing (port 0), known once it listens: a port picked here and
        # passed on could be taken in between (a CI run's worker failed to start with "Address already in use").
        # The scheduler writes its address to a file, which the workers read too.
        scheduler_file = folder / "scheduler.json"
        self.started: dict[str, subprocess.Popen] = {}  # the workers, by name
        self.scheduler = self._start("scheduler", [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                                   "--dashboard-address", "127.0.0.1:0",
                                                   "--scheduler-file", str(scheduler_file)])
        self.address = self._scheduler_address(scheduler_file)
        self.started = {f"worker{i}": self._start(f"worker{i}", [
            str(DASK), "worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
            "--name", f"worker{i}", "--dashboard-address", "127.0.0.1:0", "--nthreads", "1", "--resources", "train=1",
            "--local-directory", str(folder / f"worker{i}")]) for i in range(workers)}
        self.workers: dict[str, subprocess.Popen] = {}  # by the address each worker listens on
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
            self.workers = {address: self.started[info["name"]]
                            for address, info in client.scheduler_info()["workers"].items()}

    def _scheduler_address(self, scheduler_file: Path) -> str:
        """The address the scheduler listens on, from the file it writes once it does."""
        deadline = time.monotonic() + WORKERS_ARRIVE_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError, KeyError):  # not written yet, or half written
                return json.loads(scheduler_file.read_text())["address"]
            if self.scheduler.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        log = (self.folder / "scheduler.log").read_text(errors="replace")[-1500:]
        raise RuntimeError(f"the Dask scheduler did not start within {WORKERS_ARRIVE_S:.0f} s:\n{log}")

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        with open(self.folder / f"{name}.log", "wb") as log:  # the child keeps its own copy of the file
            return subprocess.Popen(argv, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def kill_worker(self, address: str) -> None:
        """SIGKILL a worker and its nanny: the machine as good as switched off."""
        os.killpg(self.workers.pop(address).pid, signal.SIGKILL)

    def close(self) -> None:
        for proc in [*self.started.values(), self.scheduler]:
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
