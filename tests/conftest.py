"""Shared fixtures: real MNIST from ../shared/data, small subsets of it, an isolated run store, a trained
checkpoint and a store holding it."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from core.networks import network_spec
from core.runtime import LOAD_COPIES, prepare_process

prepare_process("lenet5")  # before any test imports mindspore
# The MLP's training processes skip MindSpore's weight copies in K-step graphs (core.runtime): so do the tests,
# whose K-step tests (tests/process/test_teaching.py) check that this trains what one step per call trains.
os.environ.setdefault(LOAD_COPIES, network_spec("mlp").load_copies)
# AppTest runs the pages in this process, over a new store per test: a dispatcher thread for each would pile up
# (and start runs a test means to keep queued). Start buttons still start a run at once when a slot is free;
# the dispatcher's own tests run it explicitly, and the servers the browser tests start dispatch (tests/support/server.py).
os.environ["STUDIO_DISPATCH"] = "0"
# The pages' tests are the trusted single-user machine's (STUDIO_OPEN=1: no access link asked); the access link's
# own tests (tests/unit/test_server_token.py, tests/browser/test_browser_token.py) unset it, as ./run.sh's default is.
os.environ["STUDIO_OPEN"] = "1"
# The custom operators' library is built once per test session into a temporary folder (core.kernels), not
# into the user's cache; the processes the tests start (xdist's workers too) inherit the folder. Likewise the
# drawn-looking training digits (core/data/drawn_look.py) and the warm workers' compiled graphs
# (core/training/graph_cache.py). ./test.sh gives both of its phases one of each; a folder made here goes when
# this session ends (pytest_unconfigure).
_CACHES_MADE_HERE: list[str] = []
for _cache, _prefix in (("STUDIO_KERNEL_CACHE", "studio-kernels-"), ("STUDIO_DATA_CACHE", "studio-data-"),
                        ("STUDIO_GRAPH_CACHE_DIR", "studio-graphs-")):
    if not os.environ.get(_cache):
        os.environ[_cache] = tempfile.mkdtemp(prefix=_prefix)
        _CACHES_MADE_HERE.append(os.environ[_cache])

from playwright.sync_api import expect  # noqa: E402

# A browser test's assertion waits this long for what the page promises: Playwright's default, 5 s, is too short
# on a CI machine whose cores are shared.
expect.set_options(timeout=30_000)

from core import PROJECT_ROOT  # noqa: E402
from core.app import model_service  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.data.folders import validate_mnist_dir  # noqa: E402
from core.data.idx import read_images, read_labels, write_idx  # noqa: E402
from core.model import checkpoint  # noqa: E402
from core.runs.launch import launcher  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from core.training.loop import train  # noqa: E402
from tests.support import cpu_report  # noqa: E402
from tests.support.leftovers import end_processes_naming, end_remembered  # noqa: E402

SHARED = Path(os.environ.get("STUDIO_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_mnist() -> Path:
    path = SHARED / "mnist"
    assert (path / "test" / "t10k-images-idx3-ubyte").exists(), \
        f"real MNIST expected in {path} (set STUDIO_SHARED_DATA to the shared data folder)"
    return path


@pytest.fixture(scope="session")
def shared_gz() -> Path:
    return SHARED / "mnist-gz"


def make_subset(root: Path, source: Path, n_train: int, n_test: int) -> Path:
    for split, prefix, n in (("train", "train", n_train), ("test", "t10k", n_test)):
        if n == 0:
            continue
        images = read_images(source / split / f"{prefix}-images-idx3-ubyte")[:n]
        labels = read_labels(source / split / f"{prefix}-labels-idx1-ubyte")[:n]
        (root / split).mkdir(parents=True, exist_ok=True)
        write_idx(images, labels, root / split / f"{prefix}-images-idx3-ubyte",
                  root / split / f"{prefix}-labels-idx1-ubyte")
    return root


@pytest.fixture(scope="session")
def small_mnist(tmp_path_factory, shared_mnist) -> Path:
    """1,200 real training images and 500 real test images in the quick-start layout."""
    return make_subset(tmp_path_factory.mktemp("small"), shared_mnist, 1200, 500)


DATABASES = ("sqlite", "postgresql")


GROUPS = ("unit", "process", "browser", "reliability")  # tests/<group>/, each a marker: pytest -m unit


def pytest_configure(config):
    cpu_report.register(config)
    keep_longest_first(config.option)


def keep_longest_first(option) -> None:
    """Turn pytest-xdist's --loadscope-reorder (its default) off, where xdist is loaded: it would start the files
    with most tests first and undo pytest_collection_modifyitems' longest-first order."""
    if hasattr(option, "loadscopereorder"):
        option.loadscopereorder = False


def pytest_unconfigure(config):
    for folder in _CACHES_MADE_HERE:  # temporary: a process still ending may yet write a file into it
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(items):
    """Each test is marked with its folder's group (pytest.ini registers them), and the files run longest first
    (tests/support/file_seconds.json, as last measured; a new file counts as short): on two workers a long file
    left for the end would keep one worker busy while the other has nothing left to do (keep_longest_first)."""
    for item in items:
        group = Path(str(item.fspath)).parent.name
        if group in GROUPS:
            item.add_marker(getattr(pytest.mark, group))
    seconds = json.loads((Path(__file__).parent / "support" / "file_seconds.json").read_text())["wall_s"]
    items[:] = sorted(items, key=lambda item: -seconds.get(item.location[0], 0.0))  # stable: a file's order kept


def pytest_generate_tests(metafunc):
    """Every test that uses a store runs on SQLite; in modules that set BOTH_DATABASES = True, on a real
    PostgreSQL server too (tests/support/postgres.py)."""
    if "database" in metafunc.fixturenames:
        both = getattr(metafunc.module, "BOTH_DATABASES", False)
        metafunc.parametrize("database", DATABASES if both else DATABASES[:1], indirect=True)


@pytest.fixture(scope="session")
def postgres_server():
    from tests.support.postgres import started_postgres
    server = started_postgres()
    yield server
    server.stop()


@pytest.fixture
def database(request, monkeypatch):
    """The database URL of this test's store (None: SQLite in the store's folder), also what the pages and
    child processes see ($STUDIO_DATABASE_URL)."""
    if request.param == "sqlite":
        monkeypatch.delenv("STUDIO_DATABASE_URL", raising=False)
        yield None
        return
    url = request.getfixturevalue("postgres_server").new_database()
    monkeypatch.setenv("STUDIO_DATABASE_URL", url)
    yield url
    from core.runs.store.database import dispose
    dispose(url)


@pytest.fixture
def store(request, tmp_path, monkeypatch, database):
    """An empty run store, also the one the pages (AppTest) and child processes see ($STUDIO_DATA_DIR). A unit
    test's SQLite store is in memory (RunStore.in_memory: no file written or synced), unless its module sets
    STORE_ON_DISK = True or the test is marked store_on_disk (a child process opens its store); the other groups'
    tests start processes, which open the store's file."""
    monkeypatch.setenv("STUDIO_DATA_DIR", str(tmp_path / "store"))
    on_disk = database is not None or getattr(request.module, "STORE_ON_DISK", False) \
        or request.node.get_closest_marker("store_on_disk") is not None \
        or request.node.get_closest_marker("unit") is None  # the group's marker, set at collection
    if on_disk:
        disk = RunStore(tmp_path / "store", database)
        yield disk
        launcher.shutdown(disk)  # its processes end with the test's folder (_nothing_left_running)
        return
    memory = RunStore.in_memory(tmp_path / "store")
    monkeypatch.setenv("STUDIO_DATABASE_URL", memory.url)
    yield memory
    launcher.shutdown(memory)
    memory.close()


@pytest.fixture(scope="module")
def trained_ckpt(tmp_path_factory, small_mnist):
    """A checkpoint of an MLP trained one epoch on small_mnist."""
    cfg = TrainConfig(network="mlp", mode="pynative", optimizer="adam", learning_rate=0.002, epochs=1,
                      data_dir=str(small_mnist))
    result = train(cfg, validate_mnist_dir(small_mnist))
    return checkpoint.save(result.net, cfg, tmp_path_factory.mktemp("ck") / "mlp.ckpt")


@pytest.fixture
def with_run(store, trained_ckpt):
    """The store with trained_ckpt imported as a finished run: (store, run id)."""
    run_id = model_service.import_checkpoint(store, trained_ckpt.read_bytes(), "mlp.ckpt")
    return store, run_id


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _nothing_left_running(request):
    """Whatever a test started for its folder ends with it (tests/support/leftovers.py): a run it left training,
    a warm worker it left waiting."""
    yield
    folder = request.node.funcargs.get("tmp_path")
    if folder is not None:
        end_processes_naming(folder)


@pytest.fixture(scope="module", autouse=True)
def _nothing_left_running_by_the_modules_servers():
    """The runs of the servers a module started (tests/support/server.py) end with the module."""
    yield
    end_remembered()


@pytest.fixture(autouse=True)
def _english_outside_a_script_run():
    """UI text asked for outside a script run is in the language of the last AppTest run (ui.language.language):
    a test that switched to Chinese left the next test's figures in Chinese. Each test starts in English."""
    from ui import language as i18n
    i18n._outside_script_lang = i18n.i18n.DEFAULT
    yield
