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


def test_the_libraries_mypy_does_not_follow_for_speed_are_not_imported_by_the_checked_code():
    """pyproject.toml's second override skips libraries that mypy reached only through other libraries' imports;
    a module of the studio that imported one would be checked against Any without a word."""
    import ast
    mypy = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    skipped = {m.removesuffix(".*") for m in mypy["overrides"][1]["module"]}
    assert {"narwhals", "altair", "click"} <= skipped
    importing = []
    for folder in mypy["files"]:
        for path in (PROJECT_ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                importing += [f"{path.relative_to(PROJECT_ROOT)}: {n}" for n in names if n.split(".")[0] in skipped]
    assert importing == []
