"""The suite's files reach pytest-xdist's two workers longest first (tests/conftest.py sorts them by
tests/support/file_seconds.json). xdist's file scheduler reorders files by their number of tests unless told not
to (tests/conftest.py's keep_longest_first, from pytest_configure); then a long file of three tests would start
last and run alone. ./test.sh runs the unit group beside both phases at the lowest priority, where a test can wait
seconds for a core: a unit test that waits against a clock is marked `deadline` and runs in phase 1 instead."""
import ast
from types import SimpleNamespace

from xdist.scheduler import LoadFileScheduling

from core import PROJECT_ROOT
from tests.conftest import keep_longest_first

CLOCK_CALLS = {"wait_for", "let_pass", "monotonic", "sleep"}  # and a join or wait with a timeout


class Worker:
    """What the scheduler asks of a worker: its id, to be sent tests, and to be shut down."""

    def __init__(self, name: str):
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def first_files(reorder: bool, collection: list[str]) -> list[str]:
    """The file each of two workers is given first, under this run's option or its opposite."""
    config = SimpleNamespace(option=SimpleNamespace(loadscopereorder=reorder), getvalue=lambda name: ["2*popen"])
    scheduler = LoadFileScheduling(config)
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
    for worker in workers:
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    return [collection[w.sent[0][0]].split("::")[0] for w in workers]


def test_the_workers_start_on_the_longest_files_not_on_the_files_with_most_tests(pytestconfig):
    long_few = [f"tests/process/test_long.py::test_{i}" for i in range(3)]  # first: conftest put it there
    short_many = [f"tests/unit/test_short_{k}.py::test_{i}" for k in range(2) for i in range(20)]
    collection = long_few + short_many
    option = SimpleNamespace(loadscopereorder=True)  # xdist's default
    keep_longest_first(option)
    assert "tests/process/test_long.py" in first_files(option.loadscopereorder, collection)
    assert "tests/process/test_long.py" not in first_files(True, collection)  # the check can fail
    # and this run's own setting is the one pytest_configure left (False too where xdist is not loaded)
    assert getattr(pytestconfig.option, "loadscopereorder", False) is False


def clock_calls(function: ast.FunctionDef) -> set[str]:
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            first = node.args[0] if node.args else None
            timed = (isinstance(first, ast.Constant) and isinstance(first.value, (int, float))
                     or any(k.arg == "timeout" for k in node.keywords))
            if name in CLOCK_CALLS or (name in ("join", "wait") and timed):
                found.add(name)
    return found


def unmarked_waits(source: str) -> list[str]:
    """The tests of a module that call a clock (themselves or through a helper of the module) and are not marked
    `deadline`, neither by a decorator nor by the module's pytestmark."""
    tree = ast.parse(source)
    module_marked = any(isinstance(n, ast.Assign) and "mark.deadline" in ast.unparse(n.value) for n in tree.body)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    unmarked = []
    for name, test in functions.items():
        if not name.startswith("test_") or module_marked:
            continue
        if any("mark.deadline" in ast.unparse(d) for d in test.decorator_list):
            continue
        helpers = {n.func.id for n in ast.walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if clock_calls(test) or any(clock_calls(functions[h]) for h in helpers & functions.keys() - {name}):
            unmarked.append(name)
    return unmarked


def test_every_unit_test_that_waits_against_a_clock_is_marked_deadline():
    unmarked = {p.name: unmarked_waits(p.read_text()) for p in sorted((PROJECT_ROOT / "tests" / "unit").glob("test_*.py"))}
    assert {name: tests for name, tests in unmarked.items() if tests} == {}, "mark them @pytest.mark.deadline"
    # the check can fail: a wait through a helper, and one with a timeout, unmarked; a marked one passes
    sample = ("import pytest\ndef started(t): t.join(5)\ndef test_a(): started(None)\n"
              "def test_b(ev): ev.wait(timeout=1)\n@pytest.mark.deadline\ndef test_c(): wait_for(f)\n"
              "def test_d(): assert 1\n")
    assert unmarked_waits(sample) == ["test_a", "test_b"]
    assert unmarked_waits("import pytest\npytestmark = pytest.mark.deadline\ndef test_e(): let_pass(1)\n") == []
