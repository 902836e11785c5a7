"""Processes of this machine: is one alive, its descendants, and ending a whole tree of them (psutil, which
also makes sure a signal never reaches a new process that took an ended one's pid)."""
from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable

import psutil

__all__ = ["pid_alive", "process_tree", "kill_tree"]

KILL_GRACE_S = 2.0


def _alive(process: psutil.Process) -> bool:
    """Whether it still runs (a zombie, ended but not yet reaped by its parent, does not)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # another user's process: it exists


def pid_alive(pid: int | None) -> bool:
    """True if a process with this pid runs (zombies count as dead)."""
    if not pid:
        return False
    try:
        return _alive(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False


def process_tree(root_pid: int) -> list[int]:
    """root_pid and all its descendants, parents first."""
    try:
        return [root_pid, *(child.pid for child in psutil.Process(root_pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return [root_pid]


def _processes(pids: Iterable[int]) -> list[psutil.Process]:
    found = []
    for pid in dict.fromkeys(pids):
        if pid and pid != os.getpid():
            with contextlib.suppress(psutil.NoSuchProcess):  # ended already: nothing to end
                found.append(psutil.Process(pid))
    return found


def kill_tree(root_pid: int, extra: Iterable[int] = ()) -> None:
    """End a process, its descendants and `extra` (e.g. msrun, its scheduler and workers, which run in
    process groups of their own): SIGTERM, then SIGKILL what is left after KILL_GRACE_S."""
    processes = _processes([*process_tree(root_pid), *extra])
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 1.0)):
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):  # ended, or not ours to end
                process.send_signal(sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(_alive(p) for p in processes):
            time.sleep(0.1)
        processes = [p for p in processes if _alive(p)]
        if not processes:
            return
