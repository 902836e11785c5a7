"""Warm workers: one process per network, started ahead with MindSpore loaded, handed the next run of its
network (core/cli/warm_worker.py). Start → first step then skips the worker's start (process, imports): 1.7–2.4 s
of the 2.8–4.1 s measured before (docs/performance.md). Only the app server keeps a pool (core/runs/launch/launcher.py
serve); STUDIO_WARM_WORKERS=0 turns it off. Each waiting process holds MindSpore's memory (~0.3 GB).
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path

from core import PROJECT_ROOT
from core.config import NETWORKS
from core.networks import network_spec
from core.runs.store import RunStore
from core.runtime import child_environment

__all__ = ["WarmPool", "WARM_ENV", "warm_wanted", "log_path"]

WARM_ENV = "STUDIO_WARM_WORKERS"


def warm_wanted() -> bool:
    return os.environ.get(WARM_ENV, "1").strip() != "0"


def log_path(store: RunStore, network: str) -> Path:
    """A waiting worker's own output (once handed a run, its output goes to the run's log)."""
    return store.logs_dir / f"warm-{network}.log"


class WarmPool:
    def __init__(self, store: RunStore):
        self.store = store
        self.ready: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()

    def fill(self) -> None:
        """Start a warm worker for every network whose spec keeps one and that has none (in the background:
        returns at once)."""
        with self._lock:
            for network in (n for n in NETWORKS if network_spec(n).warm_worker):
                proc = self.ready.get(network)
                if proc is None or proc.poll() is not None:
                    self.ready[network] = self._start(network)

    def _start(self, network: str) -> subprocess.Popen:
        env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                            **self.store.command_env())
        with open(log_path(self.store, network), "ab") as log:  # the child keeps its own copy of the file
            return subprocess.Popen([sys.executable, "-m", "core.cli.warm_worker", network, *self.store.command_args()],
                                    cwd=PROJECT_ROOT, env=env, stdin=subprocess.PIPE, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def take(self, network: str, run_id: str) -> subprocess.Popen | None:
        """Hand the run to the waiting worker of its network (None: there is none; start one cold). The pool
        starts the next warm worker of that network when the run has ended."""
        with self._lock:
            proc = self.ready.pop(network, None)
        if proc is None or proc.poll() is not None:
            return None
        assert proc.stdin is not None  # started with stdin=PIPE
        try:
            proc.stdin.write(f"{run_id}\n".encode())
            proc.stdin.close()
        except OSError:
            return None
        threading.Thread(target=self._refill_when_done, args=(proc,), daemon=True, name="warm-refill").start()
        return proc

    def _refill_when_done(self, proc: subprocess.Popen) -> None:
        """Start the next warm worker of the network when this one's run has ended: loading MindSpore while the
        run compiles its graphs slowed them 2-3x on two cores and held the page's update back ~3 s
        (bench/start_latency.py); between runs it costs nobody."""
        proc.wait()
        self.fill()

    def close(self) -> None:
        with self._lock:
            for proc in self.ready.values():
                with contextlib.suppress(OSError):  # a worker that has exited already has no stdin to close
                    if proc.stdin is not None:
                        proc.stdin.close()  # end of stdin: it exits
            self.ready.clear()
