"""The suite's clean-up: a process a test started for its folder, with its descendants, ends with the test;
another folder's process, even one whose name starts alike, does not."""
from __future__ import annotations

import subprocess
import sys

import psutil
import pytest

from tests.support.helpers import wait_for
from tests.support.leftovers import end_processes_naming

# Each test waits for processes against a clock (pytest.ini's `deadline`): ./test.sh runs them in phase 1.
pytestmark = pytest.mark.deadline

# a parent naming a folder (argv[1]), which starts a child that names nothing; both wait until a signal ends them
PARENT = ("import signal, subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import signal; signal.pause()']);"
          " print('started', flush=True); signal.pause()")


def _started(folder) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", PARENT, str(folder / "store")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    wait_for(lambda: psutil.Process(proc.pid).children(), timeout=30, what="the child")
    return proc


def test_a_process_naming_the_folder_ends_with_its_descendants_and_another_folders_stays(tmp_path):
    mine, other = _started(tmp_path / "mine"), _started(tmp_path / "mine1")  # a folder named alike
    try:
        child = psutil.Process(mine.pid).children()[0]
        ended = end_processes_naming(tmp_path / "mine")
        assert len(ended) == 1 and str(tmp_path / "mine" / "store") in ended[0]
        assert mine.wait(timeout=30) == -9
        wait_for(lambda: not child.is_running() or child.status() == psutil.STATUS_ZOMBIE, timeout=30, what="the child")
        assert other.poll() is None, "a process of another folder keeps running"
    finally:
        for proc in (mine, other):
            for member in [*psutil.Process(proc.pid).children(), psutil.Process(proc.pid)] if proc.poll() is None else []:
                member.kill()
            proc.wait(timeout=30)
