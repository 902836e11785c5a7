"""Training batches from images decoded once and kept in memory, for runs without augmentation.

Why: MindSpore's data pipeline runs in its own threads while the step runs, and on two cores they take CPU
from the step itself. Fed from memory, training the bundled images through the command line went from 14,523
to 21,646 samples/s (MLP) and from 6,725 to 7,767 (LeNet-5): `python -m bench.ab_commits 8a9cd51 ad77247`
(the commits before and after), 3 interleaved rounds (bench/results/ab_commits.json). The images are
kept as uint8 (the full 60,000 images: 47 MB) and each batch is normalised by `preprocess_numpy`, which gives
the pipeline's own output bit for bit (tests/test_training_pieces.py). Augmentation (a random affine per image)
stays in MindSpore's pipeline.

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

__all__ = ["MemoryBatches"]


class MemoryBatches:
    """Batches of `indices` of a folder's split, shuffled each epoch by a generator seeded with `seed` (the run's
    seed: the same orders again for the same seed, a new order every epoch). The last batch of an epoch may
    be smaller, as with the pipeline's batch(drop_remainder=False)."""

    def __init__(self, folder: MnistFolder, split: str, indices: np.ndarray, batch_size: int, seed: int):
        images_file, labels_file = SPLIT_FILES[split]
        indices = np.asarray(indices, dtype=np.int64)
        self.images = read_images(folder.split_dir(split) / images_file)[indices]
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
            yield ms.Tensor.from_numpy(preprocess_numpy(self.images[chosen])), ms.Tensor.from_numpy(self.labels[chosen])
