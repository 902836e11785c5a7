"""Processes of this machine: is one alive, its descendants, and ending a whole tree of them."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["pid_alive", "process_tree", "kill_tree"]

KILL_GRACE_S = 2.0


def pid_alive(pid: int | None) -> bool:
    """True if a process with this pid runs (zombies count as dead)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True  # no /proc: trust kill()


def process_tree(root_pid: int) -> list[int]:
    """root_pid and all its descendants (from /proc), parents first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def kill_tree(root_pid: int, extra: list[int] = ()) -> None:
    """End a process, its descendants and `extra` (e.g. msrun, its scheduler and workers, which run in
    process groups of their own): SIGTERM, then SIGKILL what is left after KILL_GRACE_S."""
    pids = [p for p in dict.fromkeys([*process_tree(root_pid), *extra]) if p and p != os.getpid()]
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 1.0)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.1)
        pids = [p for p in pids if pid_alive(p)]
        if not pids:
            return
