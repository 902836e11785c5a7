"""docs/architecture.md's module table, made from the modules' own docstrings (their first sentence), so that it
cannot drift from the code: one row per module of core/, ui/ and app_pages/, grouped by folder.

    .venv/bin/python scripts/module_table.py          # rewrite the table between its markers
    .venv/bin/python scripts/module_table.py --check  # exit 1 when the table is not what the code says

tests/unit/test_structure.py runs the check, and fails on a module without a docstring.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
FOLDERS = ("core", "ui", "app_pages")
BEGIN, END = "<!-- modules: made by scripts/module_table.py -->", "<!-- /modules -->"


def first_sentence(docstring: str) -> str:
    """The docstring's first sentence, on one line: up to the first period that ends a sentence (not one inside
    a `code span` or brackets)."""
    text = " ".join(docstring.split("\n\n", 1)[0].split())
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif not code and ch in "([":
            depth += 1
        elif not code and ch in ")]":
            depth = max(depth - 1, 0)
        elif ch == "." and not code and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            return text[:i + 1]
    text = text.rstrip(".:;, ")
    return text if text.endswith(("?", "!")) else text + "."


def modules() -> list[tuple[str, str]]:
    """(path, first sentence) of every module, in folder order; "" where a module has no docstring."""
    rows = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts or "migrations" in path.parts:
                continue
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            if path.name == "__init__.py" and not doc:
                continue  # a namespace's marker
            rows.append((str(path.relative_to(ROOT)), first_sentence(doc) if doc else ""))
    return rows


def table() -> str:
    lines = ["| module | job (its docstring's first sentence) |", "|---|---|"]
    lines += ["| `" + path + "` | " + job.replace("|", "\\|") + " |" for path, job in modules()]
    return "\n".join(lines)


def written(doc: str) -> str:
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/architecture.md's table is stale")
    args = ap.parse_args()
    doc = DOC.read_text()
    if args.check:
        bare = [path for path, job in modules() if not job]
        if bare:
            print("modules without a docstring (say what the module is for): " + ", ".join(bare), file=sys.stderr)
            return 1
        if written(doc) != doc:
            print("docs/architecture.md's module table is stale: run scripts/module_table.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(written(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
