"""The suite's files reach pytest-xdist's two workers longest first (tests/conftest.py sorts them by
tests/support/file_seconds.json). xdist's file scheduler reorders files by their number of tests unless told not
to (tests/conftest.py's keep_longest_first, from pytest_configure); then a long file of three tests would start
last and run alone."""
from types import SimpleNamespace

from xdist.scheduler import LoadFileScheduling

from tests.conftest import keep_longest_first


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
