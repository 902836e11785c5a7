"""The tools Python teams use, run as part of the suite: ruff (style, bug-prone constructs, complexity) on the
whole project and mypy on core/, ui/ and app_pages/, both configured in pyproject.toml and clean."""
import subprocess
import sys
import tomllib

from core import PROJECT_ROOT


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_core_ui_and_the_pages():
    checked = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert {"core", "ui", "app_pages"} <= set(checked)
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
