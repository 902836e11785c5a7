"""The suite's files reach pytest-xdist's two workers longest first (tests/conftest.py sorts them by
tests/support/file_seconds.json). xdist's file scheduler reorders files by their number of tests unless told not
to (tests/conftest.py's pytest_configure tells it); then a long file of three tests would start last and run
alone."""
from types import SimpleNamespace

import pytest
from xdist.scheduler import LoadFileScheduling


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
    reorder = getattr(pytestconfig.option, "loadscopereorder", None)
    if reorder is None:
        pytest.skip("pytest-xdist is not loaded in this run (-p no:xdist): nothing reorders the files")
    assert "tests/process/test_long.py" in first_files(reorder, collection), \
        "tests/conftest.py must turn xdist's loadscopereorder off: xdist would start the files with most tests first"
    assert "tests/process/test_long.py" not in first_files(not reorder, collection)  # the check can fail
