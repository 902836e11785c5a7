"""Read and check MNIST IDX files with NumPy only (no MindSpore), for validation and the Data page."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

IMAGE_MAGIC = 2051  # 0x00000803: unsigned byte, 3 dimensions
LABEL_MAGIC = 2049  # 0x00000801: unsigned byte, 1 dimension
IMAGE_SIDE = 28


class DataError(ValueError):
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
        raise DataError(f"Cannot read {path}: permission denied. Make it readable (e.g. `chmod a+r {path}`).") from None
    except OSError as e:
        raise DataError(f"Cannot read {path}: {e.strerror}. Check the file and try again.") from None
    if len(head) < 8:
        raise DataError(f"{path} is too short to be an MNIST {kind} file ({len(head)} bytes). "
                        "Download it again.")
    magic, count = struct.unpack(">II", head[:8])
    if magic != expected_magic:
        hint = ""
        if head[:2] == b"\x1f\x8b":
            hint = " It looks gzip-compressed: unpack it with `gunzip`."
        elif magic in (IMAGE_MAGIC, LABEL_MAGIC):
            hint = " It looks like the other kind of MNIST file: check that images and labels are not swapped."
        raise DataError(f"{path} is not an MNIST {kind} file: magic number {magic:#010x}, "
                        f"expected {expected_magic:#010x}.{hint}")
    size = os.path.getsize(path)
    if expected_magic == IMAGE_MAGIC:
        if len(head) < 16:
            raise DataError(f"{path} is truncated inside its header. Download it again.")
        rows, cols = struct.unpack(">II", head[8:16])
        if (rows, cols) != (IMAGE_SIDE, IMAGE_SIDE):
            raise DataError(f"{path} holds {rows}x{cols} images; MNIST images are 28x28.")
        expected = 16 + count * IMAGE_SIDE * IMAGE_SIDE
    else:
        expected = 8 + count
    if size != expected:
        state = "truncated" if size < expected else "longer than its header says"
        raise DataError(f"{path} is {state}: {size:,} bytes, the header promises {expected:,} "
                        f"({count:,} {kind}s). Download it again.")
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
        raise DataError(f"{path} holds label {int(labels[bad[0]])} (sample {int(bad[0])}; {len(bad):,} such labels "
                        "in all), but MNIST labels are the digits 0 to 9. This is not an MNIST labels file, or it "
                        "is damaged: replace it.")
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
