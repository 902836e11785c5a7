"""Warm workers: processes with MindSpore loaded that train run after run (core/cli/warm_worker.py).

The app server keeps one waiting per network, started ahead (`WarmPool(store)`, `fill`): Start then skips the
worker's start (process, imports), 1.7–2.4 s of the 2.8–4.1 s measured before (docs/performance.md);
STUDIO_WARM_WORKERS=0 turns that off. Any process that dispatches (the app server, a sweep's command line) also
keeps the workers it started: a worker whose run ended by itself (completed, early-stopped, pruned, diverged)
says so on its ready pipe and waits for the next run of its network, so a sweep's trials and a queue's runs load
MindSpore once per process, not once per run (STUDIO_REUSE_WORKERS=0 turns that off). A worker ends after a run
that was stopped or failed (its state is not trusted), after MAX_RUNS runs, when it has waited idle_s for another
run, or when the pool lets it go; the server's pool then starts the next one. Each waiting process holds
MindSpore's memory (~0.3 GB). A page sends the settings it shows (`want`): the waiting worker of their network
compiles their graphs ahead, so that Start with settings other than the defaults does not wait for MindSpore's
compiler either.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path

from core import PROJECT_ROOT
from core.config import NETWORKS, TrainConfig
from core.networks import network_spec
from core.runs.launch.priority import lower_priority
from core.runs.store import RunStore
from core.runtime import child_environment

__all__ = ["WarmPool", "WARM_ENV", "REUSE_ENV", "REUSED_IDLE_S", "PREPARE", "warm_wanted", "reuse_wanted", "log_path"]

WARM_ENV = "STUDIO_WARM_WORKERS"
REUSE_ENV = "STUDIO_REUSE_WORKERS"
PREPARE = "prepare "  # a line into a waiting worker's stdin: "prepare " + a TrainConfig's JSON (want)
REUSED_IDLE_S = 60.0  # a pool that starts no worker ahead lets a finished worker wait this long for another run


def warm_wanted() -> bool:
    return os.environ.get(WARM_ENV, "1").strip() != "0"


def reuse_wanted() -> bool:
    return os.environ.get(REUSE_ENV, "1").strip() != "0"


def log_path(store: RunStore, network: str) -> Path:
    """A waiting worker's own output (while it trains a run, its output goes to the run's log)."""
    return store.logs_dir / f"warm-{network}.log"


class WarmPool:
    """ahead: keep a worker waiting for every network whose spec wants one (the app server); else only the
    workers that finished a run wait, each at most idle_s seconds (0: for ever)."""

    def __init__(self, store: RunStore, ahead: bool = True, idle_s: float = 0.0):
        self.store, self.ahead, self.idle_s = store, ahead, idle_s
        self.ready: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # one line at a time into a worker's stdin (pages' threads, the dispatcher)
        self._wanted: dict[str, str] = {}  # network -> the prepare line of the settings a page showed last
        self._closed = False

    def fill(self) -> None:
        """Start a warm worker for every network whose spec keeps one and that has none (in the background:
        returns at once)."""
        with self._lock:
            self.ahead = True
            for network in (n for n in NETWORKS if network_spec(n).warm_worker):
                proc = self.ready.get(network)
                if not self._closed and (proc is None or proc.poll() is not None):
                    self.ready[network] = self._start(network)

    def want(self, config: TrainConfig) -> None:
        """The settings a page shows: the waiting worker of their network compiles their graphs ahead (it compiles
        only what differs from what it has: core/cli/warm_worker.py); a worker started or free later gets them
        too."""
        line = PREPARE + config.to_json()
        with self._lock:
            if not self.ahead or self._wanted.get(config.network) == line:
                return
            self._wanted[config.network] = line
            proc = self.ready.get(config.network)
        if proc is not None and proc.poll() is None:
            self._send(proc, line)

    def take(self, network: str, run_id: str) -> subprocess.Popen | None:
        """Hand the run to the waiting worker of its network (None: there is none)."""
        with self._lock:
            proc = self.ready.pop(network, None)
        if proc is None or proc.poll() is not None:
            return None
        return proc if self._send(proc, run_id) else None

    def _send(self, proc: subprocess.Popen, line: str) -> bool:
        """One line into the worker's stdin (False: it has gone)."""
        assert proc.stdin is not None  # started with stdin=PIPE
        with self._writing:
            try:
                proc.stdin.write(f"{line}\n".encode())
                proc.stdin.flush()
            except (OSError, ValueError):  # ValueError: its stdin closed here (the pool let it go)
                return False
        return True

    def start_for(self, network: str, run_id: str) -> subprocess.Popen:
        """A new worker of this pool for the run (its output in the run's log from the start, as a fresh worker's
        is); it stays for the next run of its network once this one has completed. OSError: not started."""
        with self._lock:
            return self._start(network, run_id)

    def close(self) -> None:
        """Let every waiting worker go (the end of its stdin: it exits); a busy one goes when its run ends."""
        with self._lock:
            self._closed = True
            waiting, self.ready = list(self.ready.values()), {}
        for proc in waiting:
            _release(proc)

    def _start(self, network: str, run_id: str | None = None) -> subprocess.Popen:
        env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                                **self.store.command_env())
        read_end, write_end = os.pipe()
        args = [sys.executable, "-m", "core.cli.warm_worker", network, *self.store.command_args(),
                "--idle-s", str(self.idle_s)]
        if reuse_wanted():  # else it trains one run and ends; the pipe's end tells _watch when
            args += ["--ready-fd", str(write_end)]
        if run_id is not None:
            args += ["--run", run_id]
        output = self.store.log_path(run_id) if run_id is not None else log_path(self.store, network)
        try:
            with open(output, "ab") as log:  # the child keeps its own copy of the file
                proc = subprocess.Popen(args, cwd=PROJECT_ROOT, env=env, stdin=subprocess.PIPE, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(write_end,))
        except OSError:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        lower_priority(proc.pid)
        threading.Thread(target=self._watch, args=(network, proc, read_end), daemon=True,
                         name=f"warm-{network}-{proc.pid}").start()
        if run_id is None and (wanted := self._wanted.get(network)):
            self._send(proc, wanted)  # read before it prepares: it prepares these settings, not the defaults'
        return proc

    def _watch(self, network: str, proc: subprocess.Popen, read_end: int) -> None:
        """Take the worker back each time it says it is ready for another run; when it has ended, start the next
        one if this pool keeps workers ahead (loading MindSpore while a run compiles its graphs slowed them 2-3x
        on two cores and held the page's update back ~3 s: bench/start_latency.py; between runs it costs nobody)."""
        with os.fdopen(read_end, "rb") as said:
            for line in said:
                if line.strip() == b"ready":
                    self._offer(network, proc)
        proc.wait()
        with self._lock:
            refill = self.ahead and not self._closed
        if refill:
            self.fill()

    def _offer(self, network: str, proc: subprocess.Popen) -> None:
        """A worker free again waits for the next run of its network, unless one already does."""
        with self._lock:
            waiting = self.ready.get(network)
            keep = not self._closed and (waiting is None or waiting.poll() is not None)
            if keep:
                self.ready[network] = proc
            wanted = self._wanted.get(network)
        if not keep:
            _release(proc)
        elif wanted:
            self._send(proc, wanted)  # a page may have shown other settings while it trained


def _release(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):  # a worker that has exited already has no stdin to close
        if proc.stdin is not None:
            proc.stdin.close()  # end of stdin: it exits
