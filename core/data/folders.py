"""Where MNIST comes from (the bundled 5,000 images or a user's folder) and checks before MindSpore reads it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import PROJECT_ROOT
from core.data.idx import IMAGE_MAGIC, LABEL_MAGIC, DataError, read_header, read_images, read_labels

BUNDLED_DIR = PROJECT_ROOT / "data" / "mnist-5k"

# The quick-start layout of MindSpore's tutorials: <dir>/train/... and <dir>/test/...
SPLIT_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


@dataclass(frozen=True)
class MnistFolder:
    root: Path
    train_count: int
    test_count: int | None  # None when the folder has no test split

    def split_dir(self, split: str) -> Path:
        return self.root / split

    @property
    def has_test(self) -> bool:
        return self.test_count is not None


PATH_MAX, NAME_MAX = 4096, 255  # Linux's limits for a whole path and one name in it, in bytes


def resolve_path(path: str | os.PathLike) -> Path:
    """The absolute path with symlinks and '..' resolved; DataError (not RuntimeError or OSError) for a path
    that cannot be resolved, e.g. a symlink loop."""
    text = os.fspath(path)
    if len(os.fsencode(text)) > PATH_MAX or any(len(os.fsencode(part)) > NAME_MAX for part in Path(text).parts):
        raise DataError("path_too_long", start=text[:60], n=len(text), most=PATH_MAX, name_most=NAME_MAX)
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError) as e:  # Python 3.11 raises RuntimeError("Symlink loop from ...")
        raise DataError("path_loop", path=path) from e


def resolve_data_dir(data_dir: str | os.PathLike | None) -> Path:
    return BUNDLED_DIR if data_dir in (None, "") else resolve_path(data_dir)


def check_split(root: Path, split: str) -> int:
    folder = root / split
    images_name, labels_name = SPLIT_FILES[split]
    if not folder.is_dir():
        raise DataError("no_split_folder", root=root, split=split, folder=folder, images=images_name,
                        labels=labels_name)
    try:
        names = sorted(os.listdir(folder))
    except PermissionError:
        raise DataError("folder_permission", folder=folder) from None
    for stem in (images_name, labels_name):
        # MnistDataset picks files by substring, so a leftover archive would be read as data.
        extras = [n for n in names if stem in n and n != stem]
        if extras:
            if stem not in names and any(n == stem + ".gz" for n in extras):
                raise DataError("only_gz", folder=folder, stem=stem, archive=folder / (stem + ".gz"))
            raise DataError("extra_files", folder=folder, extras=", ".join(extras), stem=stem)
        if stem not in names:
            raise DataError("missing_file", folder=folder, stem=stem)
    n_images = read_header(folder / images_name, IMAGE_MAGIC).count
    n_labels = read_header(folder / labels_name, LABEL_MAGIC).count
    if n_images != n_labels:
        raise DataError("count_mismatch", folder=folder, images=n_images, labels=n_labels)
    if n_images == 0:
        raise DataError("no_images", folder=folder)
    read_labels(folder / labels_name)  # refuses labels outside 0-9, which MindSpore would fail on later
    return n_images


def validate_mnist_dir(data_dir: str | os.PathLike | None, require_test: bool = False) -> MnistFolder:
    """Check a MNIST folder thoroughly; raise DataError with an actionable message if anything is off."""
    root = resolve_data_dir(data_dir)
    if not root.exists():
        raise DataError("folder_missing", root=root)
    if not root.is_dir():
        raise DataError("not_a_folder", root=root)
    try:
        entries = os.listdir(root)
    except PermissionError:
        raise DataError("folder_permission", folder=root) from None
    if not entries:
        raise DataError("folder_empty", root=root)
    train_count = check_split(root, "train")
    test_count = None
    if (root / "test").exists() or require_test:
        test_count = check_split(root, "test")
    return MnistFolder(root, train_count, test_count)


def load_arrays(folder: MnistFolder, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Images (N, 28, 28) uint8 and labels (N,) uint8 of one split, in file order."""
    return read_images(folder.split_dir(split) / SPLIT_FILES[split][0]), load_labels(folder, split)


def load_labels(folder: MnistFolder, split: str) -> np.ndarray:
    """Labels (N,) uint8 of one split, without reading its images."""
    return read_labels(folder.split_dir(split) / SPLIT_FILES[split][1])


def stratified_split(labels: np.ndarray, val_fraction: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic per-class split of sample indices into (train, validation), both sorted.

    The seed is fixed by default so that runs with different training seeds see the same validation set.
    """
    if val_fraction <= 0:
        return np.arange(len(labels)), np.arange(0)
    rng = np.random.default_rng(seed)
    val = []
    for digit in np.unique(labels):
        idx = np.flatnonzero(labels == digit)
        take = int(round(len(idx) * val_fraction))
        val.append(rng.permutation(idx)[:take])
    val_idx = np.sort(np.concatenate(val))
    train_idx = np.setdiff1d(np.arange(len(labels)), val_idx)
    return train_idx, val_idx
