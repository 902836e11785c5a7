"""A person's own handwriting, kept in the run store: drawings from the Draw page with the digit they are
(what the network read them as too), listable, deletable and exportable as MNIST IDX files."""
from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.data.folders import SPLIT_FILES
from core.data.idx import write_idx
from core.messages import ExplainedValueError
from core.runs.store.roles import TeamStore

__all__ = ["Drawing", "HandwritingSet", "MAX_DRAWINGS", "idx_zip"]

MAX_DRAWINGS = 2_000  # a person's set, not a dataset: kept small enough to list and to oversample



@dataclass(frozen=True)
class Drawing:
    id: int
    image: np.ndarray      # uint8 (28, 28): what the network saw
    label: int             # the digit it is, as its author said
    read_as: int | None    # what the network read it as when it was added
    run_id: str | None     # the model that read it
    created: float


class HandwritingSet:
    """One person's drawings in a run store (owner: as runs record it; "" on a local single-user server)."""

    def __init__(self, store: TeamStore, owner: str = ""):
        self.store, self.owner = store, owner

    def add(self, image: np.ndarray, label: int, read_as: int | None = None, run_id: str | None = None) -> int:
        image = np.asarray(image)
        if image.shape != (28, 28) or image.dtype != np.uint8:
            raise ValueError(f"a drawing is a 28×28 uint8 image, not {image.dtype} {image.shape}")
        if not 0 <= int(label) <= 9:
            raise ExplainedValueError("drawing_label", label=label)
        return self.store.add_drawing(self.owner, image.tobytes(), int(label), read_as, run_id, MAX_DRAWINGS)

    def drawings(self, ids: list[int] | None = None) -> list[Drawing]:
        """Oldest first; only those ids when given (ids deleted since are left out)."""
        wanted = None if ids is None else set(ids)
        return [Drawing(r.id, np.frombuffer(r.image, np.uint8).reshape(28, 28).copy(), r.label, r.read_as, r.run_id,
                        r.created) for r in self.store.drawings(self.owner) if wanted is None or r.id in wanted]

    def delete(self, drawing_id: int) -> None:
        self.store.delete_drawing(self.owner, drawing_id)

    def arrays(self, drawings: list[Drawing] | None = None) -> tuple[np.ndarray, np.ndarray]:
        drawings = self.drawings() if drawings is None else drawings
        images = np.stack([d.image for d in drawings]) if drawings else np.zeros((0, 28, 28), np.uint8)
        return images, np.array([d.label for d in drawings], np.uint8)

    def export_idx(self) -> bytes:
        """A zip of my-handwriting/train/ as an MNIST folder's training split (idx_zip)."""
        return idx_zip(*self.arrays(), "my-handwriting")


def idx_zip(images: np.ndarray, labels: np.ndarray, folder: str) -> bytes:
    """A zip of folder/train/train-images-idx3-ubyte and train-labels-idx1-ubyte: an MNIST folder's training
    split, which the Data page, `--data-dir` and any MNIST reader open."""
    names = SPLIT_FILES["train"]
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / n for n in names]
        write_idx(images, labels, *paths)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            for path in paths:
                z.write(path, f"{folder}/train/{path.name}")
    return buffer.getvalue()
