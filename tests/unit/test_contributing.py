"""docs/contributing.md names the files each kind of change touches: every path it names exists."""
import re

from core import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "contributing.md"


def named_paths(text: str) -> list[str]:
    """Every `code span` that is a path in the project (it has a slash and no spaces)."""
    spans = re.findall(r"`([^`\s]+)`", text)
    return sorted({s.rstrip("/") for s in spans if "/" in s and not s.startswith(("-", "http"))})


def test_every_path_the_recipes_name_exists():
    paths = named_paths(DOC.read_text())
    assert len(paths) > 20
    assert [p for p in paths if not (PROJECT_ROOT / p).exists()] == []


def test_the_check_finds_a_path_that_is_gone():
    assert named_paths("see `core/networks.py` and `ui/pacing.py`, run `./test.sh --fast`") == \
        ["core/networks.py", "ui/pacing.py"]
    assert not (PROJECT_ROOT / "core/networks.py").exists()
