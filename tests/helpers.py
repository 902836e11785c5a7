"""Helpers for tests that run the project's programs as separate processes."""
import os
import subprocess
import sys
import time

from core import PROJECT_ROOT


def cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def wait_for(predicate, timeout=60.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
