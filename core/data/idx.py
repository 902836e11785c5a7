"""Read and check MNIST IDX files with NumPy only (no MindSpore), for validation and the Data page."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.messages import Explained

IMAGE_MAGIC = 2051  # 0x00000803: unsigned byte, 3 dimensions
LABEL_MAGIC = 2049  # 0x00000801: unsigned byte, 1 dimension
IMAGE_SIDE = 28


class DataError(Explained, ValueError):
    """A data problem a person can fix; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class IdxHeader:
    magic: int
    count: int


def read_header(path: Path, expected_magic: int) -> IdxHeader:
    """Read and check an IDX header and the file size it implies."""
    kind = "image" if expected_magic == IMAGE_MAGIC else "label"
    try:
        with open(path, "rb") as f:
            head = f.read(16 if expected_magic == IMAGE_MAGIC else 8)
    except PermissionError:
        raise DataError("file_permission", path=path) from None
    except OSError as e:
        raise DataError("file_unreadable", path=path, why=e.strerror or str(e)) from None
    if len(head) < 8:
        raise DataError(f"idx_too_short_{kind}", path=path, n=len(head))
    magic, count = struct.unpack(">II", head[:8])
    if magic != expected_magic:
        why = "gzip" if head[:2] == b"\x1f\x8b" else "swapped" if magic in (IMAGE_MAGIC, LABEL_MAGIC) else "other"
        raise DataError(f"idx_magic_{kind}_{why}", path=path, magic=magic, expected=expected_magic)
    size = os.path.getsize(path)
    if expected_magic == IMAGE_MAGIC:
        if len(head) < 16:
            raise DataError("idx_header_truncated", path=path)
        rows, cols = struct.unpack(">II", head[8:16])
        if (rows, cols) != (IMAGE_SIDE, IMAGE_SIDE):
            raise DataError("idx_not_28x28", path=path, rows=rows, cols=cols)
        expected = 16 + count * IMAGE_SIDE * IMAGE_SIDE
    else:
        expected = 8 + count
    if size != expected:
        raise DataError(f"idx_{'truncated' if size < expected else 'too_long'}_{kind}", path=path, size=size,
                        expected=expected, count=count)
    return IdxHeader(magic, count)


def read_images(path: Path) -> np.ndarray:
    """All images as uint8 (N, 28, 28)."""
    header = read_header(path, IMAGE_MAGIC)
    data = np.fromfile(path, dtype=np.uint8, offset=16)
    return data.reshape(header.count, IMAGE_SIDE, IMAGE_SIDE)


def read_labels(path: Path) -> np.ndarray:
    header = read_header(path, LABEL_MAGIC)
    labels = np.fromfile(path, dtype=np.uint8, offset=8)
    bad = np.flatnonzero(labels > 9)
    if len(bad):
        raise DataError("idx_label_range", path=path, label=int(labels[bad[0]]), sample=int(bad[0]), n=len(bad))
    assert labels.size == header.count
    return labels


def write_idx(images: np.ndarray, labels: np.ndarray, images_path: Path, labels_path: Path) -> None:
    """Write images (N, 28, 28) uint8 and labels (N,) as IDX files (used by tests and benchmarks)."""
    images = np.ascontiguousarray(images, dtype=np.uint8)
    labels = np.ascontiguousarray(labels, dtype=np.uint8)
    with open(images_path, "wb") as f:
        f.write(struct.pack(">IIII", IMAGE_MAGIC, len(images), IMAGE_SIDE, IMAGE_SIDE))
        f.write(images.tobytes())
    with open(labels_path, "wb") as f:
        f.write(struct.pack(">II", LABEL_MAGIC, len(labels)))
        f.write(labels.tobytes())
