"""Training batches from images decoded once and kept in memory, for runs without augmentation.

Why: MindSpore's data pipeline runs in its own threads while the step runs, and on two cores they take CPU
from the step itself. Fed from memory, training the bundled images through the command line went from 14,523
to 21,646 samples/s (MLP) and from 6,725 to 7,767 (LeNet-5): `python -m bench.ab_commits 8a9cd51 ad77247`
(the commits before and after), 3 interleaved rounds (bench/results/ab_commits.json). The images are
normalised once by `preprocess_numpy`, which gives the pipeline's own output bit for bit
(tests/test_training_pieces.py), and kept as float32 while that takes at most `NORMALISED_LIMIT` bytes (the full
60,000 images: 188 MB); a batch is then one gather. Normalising each batch instead took 7-8.5 ms of an MLP
epoch's ~190 ms on the bundled images (100-120 us a batch of 64: numpy's four passes). Larger sets are kept as
uint8 and normalised batch by batch. Augmentation (a random affine per image) stays in MindSpore's pipeline.

Same contract as the batched MindSpore dataset the training loop otherwise iterates: `get_dataset_size()`,
and `create_tuple_iterator(num_epochs)`, of which each `iter()` is one pass (one epoch) in a new order.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import mindspore as ms
import numpy as np

from core.data.folders import SPLIT_FILES, MnistFolder
from core.data.idx import read_images, read_labels
from core.data.pipeline import preprocess_numpy

__all__ = ["MemoryBatches", "NORMALISED_LIMIT"]

NORMALISED_LIMIT = 256 * 2**20  # bytes of float32 images normalised once; beyond it, each batch is normalised


class MemoryBatches:
    """Batches of `indices` of a folder's split, shuffled each epoch by a generator seeded with `seed` (the run's
    seed: the same orders again for the same seed, a new order every epoch). The last batch of an epoch may
    be smaller, as with the pipeline's batch(drop_remainder=False)."""

    def __init__(self, folder: MnistFolder, split: str, indices: np.ndarray, batch_size: int, seed: int):
        images_file, labels_file = SPLIT_FILES[split]
        indices = np.asarray(indices, dtype=np.int64)
        images = read_images(folder.split_dir(split) / images_file)[indices]
        self.normalised_once = images.size * 4 <= NORMALISED_LIMIT  # else each batch is normalised
        self._images = _normalised(images) if self.normalised_once else images
        self.labels = read_labels(folder.split_dir(split) / labels_file)[indices].astype(np.int32)
        self.batch_size = batch_size
        self._rng = np.random.default_rng(seed)

    def get_dataset_size(self) -> int:
        return math.ceil(len(self.labels) / self.batch_size)

    def create_tuple_iterator(self, num_epochs: int = 1) -> MemoryBatches:
        return self  # every pass draws its own order: as many epochs as the loop asks for

    def epoch_order(self) -> np.ndarray:
        """The next epoch's order of the samples (advances the generator)."""
        return self._rng.permutation(len(self.labels))

    def __iter__(self) -> Iterator[tuple[ms.Tensor, ms.Tensor]]:
        order = self.epoch_order()
        for start in range(0, len(order), self.batch_size):
            chosen = order[start:start + self.batch_size]
            # from_numpy: the tensors take the new arrays' memory instead of copying it
            yield ms.Tensor.from_numpy(self._batch(chosen)), ms.Tensor.from_numpy(self.labels[chosen])

    def _batch(self, chosen: np.ndarray) -> np.ndarray:
        """The chosen images, normalised: (n, 1, 28, 28) float32, a new array."""
        if self.normalised_once:
            return self._images[chosen]
        return preprocess_numpy(self._images[chosen])


def _normalised(images: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """preprocess_numpy of every image, chunk by chunk (its temporaries stay small)."""
    out = np.empty((len(images), 1, *images.shape[1:]), np.float32)
    for start in range(0, len(images), chunk):
        out[start:start + chunk] = preprocess_numpy(images[start:start + chunk])
    return out
