"""Training batches from images decoded once and kept in memory, for runs without augmentation.

Why: MindSpore's data pipeline runs in its own threads while the step runs, and on two cores they take CPU
from the step itself. Fed from memory, training the bundled images through the command line went from 14,523
to 21,646 samples/s (MLP) and from 6,725 to 7,767 (LeNet-5): `python -m bench.ab_commits 8a9cd51 ad77247`
(the commits before and after), 3 interleaved rounds (bench/results/ab_commits.json). The images are kept as
uint8; each is normalised by `preprocess_numpy`, which gives the pipeline's own output bit for bit
(tests/process/test_training_pieces.py), the first time a batch takes it, and kept as float32 while the split's float32
copy takes at most `NORMALISED_LIMIT` bytes (the full 60,000 images: 188 MB): from the second epoch on, a
batch is one gather. Normalising each batch every epoch took 7-8.5 ms of an MLP epoch's ~190 ms on the bundled
images (100-120 us a batch of 64: numpy's four passes); normalising the whole split before the first step
took 40-50 ms of Start for the bundled images (and ~10x that for MNIST's 60,000). Larger splits are
normalised batch by batch every epoch. Augmentation (a random affine per image) stays in MindSpore's pipeline.

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

NORMALISED_LIMIT = 256 * 2**20  # bytes of float32 images kept normalised; beyond it, each epoch normalises again


class MemoryBatches:
    """Batches of `indices` of a folder's split, shuffled each epoch by a generator seeded with `seed` (the run's
    seed: the same orders again for the same seed, a new order every epoch). The last batch of an epoch may
    be smaller, as with the pipeline's batch(drop_remainder=False)."""

    def __init__(self, folder: MnistFolder, split: str, indices: np.ndarray, batch_size: int, seed: int):
        images_file, labels_file = SPLIT_FILES[split]
        indices = np.asarray(indices, dtype=np.int64)
        self._images = read_images(folder.split_dir(split) / images_file)[indices]
        # Filled as batches take each image the first time (np.empty: no memory is touched before then).
        self.keeps_normalised = self._images.size * 4 <= NORMALISED_LIMIT
        self._normalised = np.empty((len(indices), 1, *self._images.shape[1:]), np.float32) \
            if self.keeps_normalised else None
        self._ready = np.zeros(len(indices), bool)
        self.all_normalised = False  # every image is in _normalised: a batch is one gather
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
        if self.all_normalised and self._normalised is not None:
            return self._normalised[chosen]
        batch = preprocess_numpy(self._images[chosen])
        if self._normalised is not None:  # kept for the next epochs (a copy: the batch's tensor owns `batch`)
            self._normalised[chosen] = batch
            self._ready[chosen] = True
            self.all_normalised = bool(self._ready.all())
        return batch
