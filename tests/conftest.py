"""Shared fixtures: real MNIST from ../shared/data, small subsets of it, and an isolated run store."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from core.runtime import prepare_process

prepare_process("lenet5")  # before any test imports mindspore

from core.data_source import PROJECT_ROOT  # noqa: E402
from core.idx import read_images, read_labels, write_idx  # noqa: E402

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


@pytest.fixture
def store(tmp_path):
    from core.store import RunStore
    return RunStore(tmp_path / "store")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
