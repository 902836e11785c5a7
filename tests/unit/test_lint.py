"""The tools Python teams use, run as part of the suite: ruff (style, bug-prone constructs, complexity) on the
whole project and mypy on core/, both configured in pyproject.toml and clean."""
import subprocess
import sys

from core import PROJECT_ROOT


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_core():
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
