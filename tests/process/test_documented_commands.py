"""Every command the README and docs/ tell people to type names a module that exists, and the command lines
among them answer --help: a renamed or moved command fails here, not on a reader's fresh clone."""
import importlib.util
import re
import subprocess
import sys

import pytest

from core import PROJECT_ROOT

DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def documented_modules() -> set[str]:
    found = set()
    for doc in DOCUMENTS:
        found |= set(re.findall(r"python -m ([a-z_][a-z0-9_.]*[a-z0-9_])", doc.read_text()))
    return found


def test_the_documents_name_the_command_lines():
    assert {"core.cli.train", "core.cli.sweep", "core.cli.evaluate", "core.cli.control",
            "core.cli.download"} <= documented_modules()


@pytest.mark.parametrize("module", sorted(documented_modules()))
def test_a_documented_module_exists(module):
    assert importlib.util.find_spec(module) is not None, f"{module} is in the docs but not in the project"


@pytest.mark.parametrize("module", sorted(m for m in documented_modules() if m.startswith("core.cli.")))
def test_a_documented_command_line_answers_help(module):
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr
