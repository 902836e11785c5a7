import builtins
import gzip
import shutil

import numpy as np
import pytest

import core.data.idx
from core.data.folders import BUNDLED_DIR, load_arrays, stratified_split, validate_mnist_dir
from core.data.idx import DataError


def test_bundled_data_is_the_5000_image_subset():
    folder = validate_mnist_dir(None)
    assert folder.root == BUNDLED_DIR and folder.train_count == 5000 and not folder.has_test
    images, labels = load_arrays(folder, "train")
    assert images.shape == (5000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [500] * 10


def test_users_folder_in_quick_start_layout(shared_mnist):
    folder = validate_mnist_dir(shared_mnist)
    assert (folder.train_count, folder.test_count) == (5000, 10000)


def test_stratified_split_is_deterministic_and_balanced():
    _, labels = load_arrays(validate_mnist_dir(None), "train")
    tr, va = stratified_split(labels, 0.1)
    tr2, va2 = stratified_split(labels, 0.1)
    assert np.array_equal(va, va2) and np.array_equal(tr, tr2)
    assert len(va) == 500 and len(tr) == 4500 and not set(tr) & set(va)
    assert np.bincount(labels[va]).tolist() == [50] * 10


@pytest.fixture
def copy(tmp_path, small_mnist):
    dst = tmp_path / "mnist"
    shutil.copytree(small_mnist, dst)
    return dst


def _message(path):
    with pytest.raises(DataError) as e:
        validate_mnist_dir(path)
    return str(e.value)


def test_missing_folder(tmp_path):
    assert "does not exist" in _message(tmp_path / "nope")


def test_file_instead_of_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    assert "is a file, not a folder" in _message(tmp_path / "f")


def test_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    assert "is empty" in _message(tmp_path / "empty")


def test_no_train_folder(copy):
    shutil.rmtree(copy / "train")
    assert "has no 'train' folder" in _message(copy)


def test_missing_label_file(copy):
    (copy / "train" / "train-labels-idx1-ubyte").unlink()
    assert "lacks train-labels-idx1-ubyte" in _message(copy)


def test_wrong_magic_swapped_files(copy):
    t = copy / "test"
    (t / "t10k-images-idx3-ubyte").rename(t / "tmp")
    (t / "t10k-labels-idx1-ubyte").rename(t / "t10k-images-idx3-ubyte")
    (t / "tmp").rename(t / "t10k-labels-idx1-ubyte")
    m = _message(copy)
    assert "magic number" in m and "swapped" in m


def test_gzip_file_under_the_raw_name(copy):
    p = copy / "train" / "train-labels-idx1-ubyte"
    p.write_bytes(gzip.compress(p.read_bytes()))
    assert "gunzip" in _message(copy)


def test_leftover_gz_next_to_the_file(copy):
    p = copy / "train" / "train-images-idx3-ubyte"
    (p.parent / (p.name + ".gz")).write_bytes(gzip.compress(p.read_bytes()))
    m = _message(copy)
    assert "train-images-idx3-ubyte.gz" in m and "substring" in m and "delete or move" in m


def test_only_the_gz_is_there(copy):
    p = copy / "train" / "train-images-idx3-ubyte"
    (p.parent / (p.name + ".gz")).write_bytes(gzip.compress(p.read_bytes()))
    p.unlink()
    assert "unpack it with `gunzip" in _message(copy)


def test_count_mismatch(copy, shared_mnist):
    shutil.copy(shared_mnist / "train" / "train-labels-idx1-ubyte", copy / "train" / "train-labels-idx1-ubyte")
    assert "1,200 images but 5,000 labels" in _message(copy)


def test_truncated_file(copy):
    p = copy / "train" / "train-images-idx3-ubyte"
    p.write_bytes(p.read_bytes()[:-100])
    assert "truncated" in _message(copy)


def test_unreadable_file(copy, monkeypatch):
    real_open = builtins.open

    def deny(path, *a, **k):
        if str(path).endswith("t10k-labels-idx1-ubyte"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(core.data.idx, "open", deny, raising=False)
    m = _message(copy)
    assert "permission denied" in m and "chmod" in m


@pytest.mark.parametrize("split, prefix, label", [("train", "train", 200), ("test", "t10k", 77)])
def test_labels_outside_0_to_9_are_refused_for_every_split(copy, split, prefix, label):
    """MindSpore would fail mid-training (or mid-evaluation) on such a label; the folder check says so first."""
    path = copy / split / f"{prefix}-labels-idx1-ubyte"
    data = bytearray(path.read_bytes())
    data[8 + 3] = label  # the fourth label
    path.write_bytes(bytes(data))
    m = _message(copy)
    assert f"holds label {label} (sample 3" in m and "0 to 9" in m and str(path) in m


def test_a_symlink_loop_is_refused_with_a_message(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for given in (tmp_path / "a", tmp_path / "a" / "mnist"):
        with pytest.raises(DataError, match="loop of symbolic links"):
            validate_mnist_dir(given)
