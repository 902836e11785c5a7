"""What a test leaves running once it has passed or failed. A page test's Start, a sweep started from Configure, a
run a test only needed queued or a server's training run would otherwise train on, unseen, beside the next
tests (a sweep's trials trained for minutes after their test ended), and hold the test's folder open. Each process
a test starts for its folder (a worker, a warm worker, a rank, a team's server) names that folder on its command
line, so the folder finds them."""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import psutil

__all__ = ["end_processes_naming", "remember", "end_remembered"]

_remembered: list[Path] = []  # the stores of servers started for a module's tests (tests/support/server.py)


def remember(folder: Path) -> None:
    """A folder whose processes end with the module that started them (end_remembered): a module's server may
    serve all its tests, and a test may restart a server to see its runs carry on."""
    _remembered.append(Path(folder))


def end_remembered() -> None:
    """end_processes_naming for every folder remembered since the last call."""
    for folder in _remembered:
        end_processes_naming(folder)
    _remembered.clear()


def end_processes_naming(folder: Path) -> list[str]:
    """SIGKILL every process of this machine whose command line names `folder` or a path in it, with its
    descendants; returns the command lines ended."""
    ended: list[str] = []
    for process in _naming(str(folder)):
        with contextlib.suppress(psutil.NoSuchProcess):
            family = [process, *process.children(recursive=True)]
            ended.append(" ".join(process.cmdline()))
            for member in family:
                with contextlib.suppress(psutil.NoSuchProcess):
                    member.kill()
    return ended


def _naming(folder: str) -> list[psutil.Process]:
    named = re.compile(re.escape(folder) + r"(?=$|[/\s'\"=,:;])")  # the folder, not test_x1 for test_x
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = process.info["cmdline"] or []
        if process.pid != os.getpid() and any(named.search(arg) for arg in cmdline):
            found.append(process)
    return found
