"""The codebase's shape, checked: no import cycles, no long functions, imports at the top unless they defer
MindSpore (with the reason said), and app_pages/ holding only pages. Static (AST), so it runs in a second."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import PROJECT_ROOT
from ui.navigation import PAGES

PACKAGES = ("core", "ui", "app_pages")
MAX_FUNCTION_LINES = 70
# what a module may import inside a function
HEAVY_EXTERNAL = ("mindspore", "onnx", "onnxruntime", "optuna", "distributed", "tensorboardX", "mlflow", "alembic")


def project_files() -> dict[str, Path]:
    """module name -> file, for every project module (app.py included)."""
    files = {"app": PROJECT_ROOT / "app.py"}
    for package in PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


FILES = project_files()
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in FILES.items()}


def imported_modules(node: ast.AST) -> list[str]:
    """Project modules an import statement names (`from core.x import y` may name module core.x.y)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    else:
        return []
    return [n for n in names if n in FILES]


def top_level_imports(tree: ast.Module) -> list[ast.stmt]:
    return [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]


def function_imports(tree: ast.Module):
    """(function, import statement) for every import inside a function."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield fn, node


def import_graph() -> dict[str, set[str]]:
    graph = {name: set() for name in FILES}
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            graph[name].update(m for m in imported_modules(node) if m != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def mindspore_modules() -> set[str]:
    """Project modules that import MindSpore when they are imported (directly or through another)."""
    direct = {name for name, tree in TREES.items() for node in top_level_imports(tree)
              if any(a.name.split(".")[0] == "mindspore" for a in getattr(node, "names", []))
              or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mindspore")}
    heavy, changed = set(direct), True
    while changed:
        changed = False
        for name, tree in TREES.items():
            if name not in heavy and any(m in heavy for node in top_level_imports(tree) for m in imported_modules(node)):
                heavy.add(name)
                changed = True
    return heavy


def test_there_are_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_function_is_longer_than_70_lines():
    long = [f"{FILES[name].relative_to(PROJECT_ROOT)}:{fn.lineno} {fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"
            for name, tree in TREES.items() for fn in ast.walk(tree)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            and fn.end_lineno - fn.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def test_imports_inside_functions_only_defer_mindspore_and_say_so():
    """An import inside a function is allowed for MindSpore (or a module that imports it), which a process must
    not load before core.runtime.prepare_process or a page before it is needed, and for the heavy libraries
    that only some processes need (HEAVY_EXTERNAL: ONNX, Optuna, Dask, tensorboardX, MLflow, Alembic); a
    comment saying `deferred` comes on the import's line or before it in the function."""
    heavy = mindspore_modules()
    assert {"core.training.loop", "core.model.checkpoint", "core.runs.worker.execute"} <= heavy
    assert not {"core.runs.store", "core.config", "core.app.model_service", "ui.session"} & heavy
    offenders = []
    for name, tree in TREES.items():
        lines = FILES[name].read_text().splitlines()
        for fn, node in function_imports(tree):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            ok = all(m.split(".")[0] in HEAVY_EXTERNAL or m in heavy or any(x in heavy for x in imported_modules(node))
                     for m in modules)
            said = any("# deferred" in line for line in lines[fn.lineno - 1:node.end_lineno])
            if not (ok and said):
                offenders.append(f"{FILES[name].relative_to(PROJECT_ROOT)}:{node.lineno} "
                                 f"{ast.get_source_segment(FILES[name].read_text(), node)}")
    assert offenders == []


def test_no_page_or_view_loads_mindspore_when_it_is_imported():
    """MindSpore (~2 CPU-seconds and ~350 MB in the server) loads when a page first predicts or inspects, or in
    the server's background preload (core/app/model_service.py), never because a page or a view was imported
    (an exception class from core/model/checkpoint.py would load it: core/model/checkpoint_error.py)."""
    loading = sorted(n for n in mindspore_modules() if n == "app" or n.split(".")[0] in ("app_pages", "ui"))
    assert loading == [], "import these modules' MindSpore parts inside the functions that need them"


def test_no_command_line_loads_mindspore_when_it_is_imported():
    """A command loads MindSpore (~2 CPU-seconds, ~350 MB) only once it trains, evaluates or exports, never to
    read its arguments: `--help`, a wrong folder or a store command answers without it, and
    `core.cli.import_summary` reads summary files with MindSpore's message classes alone
    (core/summaries/proto_classes.py)."""
    loading = sorted(n for n in mindspore_modules() if n.startswith("core.cli."))
    assert loading == [], "import these commands' MindSpore parts inside the functions that need them"


def test_app_pages_holds_only_the_pages_of_the_navigation():
    pages = {path for path, _, _ in PAGES}
    assert {str(p.relative_to(PROJECT_ROOT)) for p in (PROJECT_ROOT / "app_pages").glob("*.py")} == pages
    # a folder named pages/ would switch Streamlit to its older multipage mode (see ui/navigation.py)
    assert not (PROJECT_ROOT / "pages").exists()


def repeated_file_names(files) -> dict[str, list[str]]:
    """file name -> its modules, for the names more than one module has (packages' __init__ aside), except
    a page and the command line of the same action: app_pages/train.py is the Train page (/train) and
    core/cli/train.py is `python -m core.cli.train`, each named by the word its user types or clicks."""
    by_name: dict[str, list[str]] = {}
    for module, path in files.items():
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(module)
    return {name: sorted(modules) for name, modules in by_name.items() if len(modules) > 1
            and sorted(m.split(".")[0] + "." + m.split(".")[1] for m in modules) != ["app_pages." + name[:-3],
                                                                                    "core.cli"]}


def test_no_two_modules_share_a_file_name():
    assert repeated_file_names(FILES) == {}


def test_the_file_name_check_finds_two_modules_alike():
    files = {"core.training.control": Path("core/training/control.py"), "core.cli.control": Path("core/cli/control.py"),
             "app_pages.train": Path("app_pages/train.py"), "core.cli.train": Path("core/cli/train.py")}
    assert repeated_file_names(files) == {"control.py": ["core.cli.control", "core.training.control"]}


CORE_ORDER = ["core.kernels", "core.networks", "core.summaries", "core.data", "core.model", "core.training", "core.runs",
              "core.app", "core.cli"]


@pytest.mark.parametrize("package", CORE_ORDER)
def test_core_packages_depend_downwards_only(package):
    """kernels <- networks <- data <- model <- training <- runs <- app <- cli: a package never imports one above
    it (core/config.py reads the network registry, which the model package builds from: both sit below)."""
    order = CORE_ORDER
    above = order[order.index(package) + 1:]
    graph = import_graph()
    upward = sorted(f"{m} -> {d}" for m in graph if m.startswith(package + ".") or m == package
                    for d in graph[m] if any(d == a or d.startswith(a + ".") for a in above))
    assert upward == []


RUNS_ORDER = ["core.runs.store", "core.runs.sweeps", "core.runs.worker", "core.runs.launch", "core.runs.people"]


@pytest.mark.parametrize("package", RUNS_ORDER)
def test_run_packages_depend_downwards_only(package):
    """core/runs/ by the process a module runs in: store <- sweeps <- worker <- launch <- people (the modules
    beside them, rows, ids, processes and run_queue, are shared); a package never imports one after it."""
    above = RUNS_ORDER[RUNS_ORDER.index(package) + 1:]
    graph = import_graph()
    upward = sorted(f"{m} -> {d}" for m in graph if m.startswith(package + ".") or m == package
                    for d in graph[m] if any(d == a or d.startswith(a + ".") for a in above))
    assert upward == []
    assert {m for m in graph if m.startswith(package + ".")}, f"{package} holds no module"


def test_the_library_never_imports_a_command_line():
    """core/cli/ holds the entry points (python -m core.cli.train, ...): nothing outside it imports them."""
    graph = import_graph()
    entries = {m for m in graph if m.startswith("core.cli.")}
    assert {"core.cli.train", "core.cli.sweep", "core.cli.worker"} <= entries
    assert sorted(f"{m} -> {d}" for m, deps in graph.items() if not m.startswith("core.cli")
                  for d in deps & entries) == []


def test_no_module_next_to_a_script_shadows_the_standard_library():
    """msrun starts core/runs/worker/rank.py as a script, so its folder is first on its sys.path: a core/runs/queue.py
    hid the standard library's queue from MindSpore (every data-parallel rank died at import). The benchmarks
    in bench/ run as scripts too: a bench/queue.py broke every one of them at `import mindspore`."""
    import sys
    folders = (PROJECT_ROOT / "core" / "runs" / "worker", PROJECT_ROOT / "bench")
    shadows = sorted(str(p.relative_to(PROJECT_ROOT)) for folder in folders for p in folder.glob("*.py")
                     if p.stem in sys.stdlib_module_names)
    assert shadows == []


DATABASE_LIBRARIES = ("sqlite3", "sqlalchemy", "alembic", "psycopg")
STORE_INSIDES = ("db", "engine", "_tx", "_connect", "_run")


def test_only_the_store_package_talks_to_the_database():
    """No module outside core/runs/store imports a database library or reaches into a store's connection: the
    store's public, typed methods are the only way in (so SQLite and PostgreSQL stay interchangeable)."""
    files = dict(FILES)
    files.update({f"bench.{p.stem}": p for p in (PROJECT_ROOT / "bench").glob("*.py")})
    found = []
    for name, path in files.items():
        if name == "core.runs.store" or name.startswith("core.runs.store."):
            continue
        tree = TREES.get(name) or ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            else:
                modules = []
            found += [f"{name}:{node.lineno} imports {m}" for m in modules
                      if m.split(".")[0] in DATABASE_LIBRARIES]
            if isinstance(node, ast.Attribute) and node.attr in STORE_INSIDES:
                owner = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
                if owner.endswith("store"):
                    found.append(f"{name}:{node.lineno} uses {owner}.{node.attr}")
    assert found == []


def test_the_database_check_finds_a_reach_into_the_store():
    tree = ast.parse("import sqlalchemy\nwith self.store.db.write() as c: pass\n")
    attrs = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in STORE_INSIDES]
    assert attrs and attrs[0].value.attr == "store"


DATE = r"\b20\d\d-[01]\d-[0-3]\d\b"
ALEMBIC_HEADER = r"^Create Date: "  # a migration's own header, written by Alembic


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in source."""
    import io
    import tokenize
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and (doc := ast.get_docstring(node, clean=False)) is not None):
            found.append((getattr(node, "lineno", 1), doc))
    return found


def dated_comments(source: str) -> list[tuple[int, str]]:
    import re
    return [(line, text) for line, text in comments_and_docstrings(source)
            if re.search(DATE, re.sub(ALEMBIC_HEADER + ".*$", "", text, flags=re.M))]


def test_no_comment_tells_the_story_of_a_day():
    """Comments say what is true of the code now; the day something was measured or went wrong belongs in a
    commit body or docs/."""
    dated = {name: found for name, path in FILES.items() if (found := dated_comments(path.read_text()))}
    assert dated == {}


def test_the_date_check_finds_a_dated_comment():
    assert dated_comments('x = 1  # 3x faster (CI on 2026-12-01)\n"2026-12-01 in a string is data"\n') == [
        (1, "# 3x faster (CI on 2026-12-01)")]
    assert dated_comments('"""A migration.\n\nCreate Date: 2026-12-01\n"""\n') == []


FIRST_COMMIT_OF_SHORT_SUBJECTS = "799ad0e29f59"  # subjects ≤ 72 characters from here on (details in the body)
MAX_SUBJECT = 72


def test_commit_subjects_are_at_most_72_characters():
    import subprocess
    git = ["git", "-C", str(PROJECT_ROOT)]
    if subprocess.run([*git, "cat-file", "-e", FIRST_COMMIT_OF_SHORT_SUBJECTS + "^{commit}"],
                      capture_output=True).returncode != 0:
        missing = f"this checkout has no git history back to {FIRST_COMMIT_OF_SHORT_SUBJECTS} (a shallow clone)"
        if os.environ.get("CI"):  # CI clones the whole history: there the check must run
            pytest.fail(missing)
        pytest.skip(missing)
    subjects = subprocess.run([*git, "log", "--format=%h %s", f"{FIRST_COMMIT_OF_SHORT_SUBJECTS}~1..HEAD"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
    assert subjects, "git log found no commits"
    too_long = [s for s in subjects if len(s.split(" ", 1)[1]) > MAX_SUBJECT]
    assert too_long == [], "write the subject in ≤ 72 characters and the details in the body"


def test_the_architecture_docs_module_table_is_what_the_docstrings_say():
    """docs/architecture.md's module table is made from the modules' docstrings (scripts/module_table.py):
    every module has one, and the table is not stale."""
    done = subprocess.run([sys.executable, "scripts/module_table.py", "--check"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
