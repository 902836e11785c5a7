"""Training digits that look drawn: a share of the training images redrawn the way a person draws on Draw & predict's
canvas (the digit's strokes, core/data/strokes.py, at a height, place and pen width of the page's range) and read
the way the page reads a drawing (core/data/drawing.py), so that the model learns that look too
(bench/drawn_digits.py measures the gain on digits drawn through the canvas).

The redrawn training split is made once per source and kept in a cache outside the work tree:
$STUDIO_DATA_CACHE, else the user's cache (core/user_cache.py: ~/.cache/mindspore-studio/drawn-look).
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.data.drawing import MNIST_STROKE_PX, DrawingError, to_mnist
from core.data.folders import SPLIT_FILES, MnistFolder
from core.data.idx import read_images, read_labels, write_idx
from core.data.strokes import Stroke, laid_out, pen_ink, strokes
from core.user_cache import user_cache_dir

__all__ = ["SHARE", "redrawn", "pen_drawing", "drawn_look_folder", "drawn_look_ready", "cache_dir"]

SHARE = 0.75  # of the training images redrawn (each run the same ones), the rest as MNIST wrote them: chosen on
# held-out drawings over 0.5 (docs/learner.md §7)
CANVAS_PX = 280  # Draw & predict's canvas
HEIGHT_PX = (80.0, 260.0)  # a drawn digit's height on it
PEN_PX = (8.0, 40.0)  # the page's thinnest and widest pen
REDRAWING = "pen-v3"  # names the way of redrawing in the cache's key: a new way makes a new cache


def cache_dir() -> Path:
    return user_cache_dir("drawn-look", "STUDIO_DATA_CACHE")


def redrawn(image: np.ndarray) -> np.ndarray:
    """One 28x28 training digit as Draw & predict would show it to the model had it been drawn on the canvas: its
    strokes (core/data/strokes.py) drawn at a height, place and pen width a person might use, then read one of
    the page's two ways (core/data/drawing.py readings). The choices are drawn from the image's own bytes, so a
    digit is always redrawn the same way."""
    rng = np.random.default_rng(zlib.crc32(np.ascontiguousarray(image).tobytes()))
    height, pen, where = rng.uniform(*HEIGHT_PX), rng.uniform(*PEN_PX), (rng.random(), rng.random())
    evened = bool(rng.random() < 0.5)
    try:
        canvas = pen_drawing(strokes(image), height, pen, where)
        return to_mnist(np.repeat(canvas[:, :, None], 3, axis=2), evened=evened)
    except DrawingError:  # a digit too small to be read as one (none in MNIST's training set): kept as it is
        return image


def pen_drawing(lines: list[Stroke], height: float, pen: float, where: tuple[float, float] = (0.5, 0.5)) -> np.ndarray:
    """Strokes (in a 28x28 image's pixels) drawn on the page's 280x280 canvas with a round pen pen px wide, as Draw
    & predict draws them, the digit height px tall; where: its place, (0, 0) top left to (1, 1) bottom right."""
    # the pen's ink stays on the canvas: the strokes keep half its width from every edge
    return pen_ink(laid_out(lines, height, pen / 2, where, CANVAS_PX), pen, CANVAS_PX)


def _cached_root(folder: MnistFolder) -> Path:
    """Where folder's redrawn training split is kept: named by its images' bytes and the redrawing's settings."""
    source = folder.split_dir("train") / SPLIT_FILES["train"][0]
    stat = source.stat()
    return cache_dir() / _key(source, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=16)
def _key(source: Path, size: int, mtime_ns: int) -> str:
    """The images' hash, read once per version of the file (a run asks for it when it starts and again when it
    loads its data)."""
    return hashlib.sha256(source.read_bytes() + f"{MNIST_STROKE_PX}:{SHARE}:{REDRAWING}".encode()).hexdigest()[:16]


def drawn_look_ready(folder: MnistFolder) -> bool:
    """Whether folder's redrawn training split is in the cache already (else the next run makes it)."""
    return (_cached_root(folder) / "train" / SPLIT_FILES["train"][1]).exists()


def drawn_look_folder(folder: MnistFolder) -> MnistFolder:
    """A folder whose training split is folder's with SHARE of its images redrawn (made on first use, then
    read from the cache); the images keep their places, so the run's indices and labels are unchanged."""
    images_name, labels_name = SPLIT_FILES["train"]
    source = folder.split_dir("train") / images_name
    root = _cached_root(folder)
    if not drawn_look_ready(folder):
        images = read_images(source)
        chosen = np.random.default_rng(0).random(len(images)) < SHARE
        mixed = images.copy()
        mixed[chosen] = np.stack([redrawn(image) for image in images[chosen]])
        _write_atomically(root, mixed, read_labels(folder.split_dir("train") / labels_name))
    return MnistFolder(root, folder.train_count, None)


def _write_atomically(root: Path, images: np.ndarray, labels: np.ndarray) -> None:
    """Write the split in a new folder beside root and rename it into place: a run that reads root never sees
    half a file, and two runs that make it at once both end with one whole copy."""
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    images_name, labels_name = SPLIT_FILES["train"]
    (staging / "train").mkdir()
    write_idx(images, labels, staging / "train" / images_name, staging / "train" / labels_name)
    try:
        staging.rename(root)
    except OSError:  # another run put its copy there first: the same bytes
        shutil.rmtree(staging)
