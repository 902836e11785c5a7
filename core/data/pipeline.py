"""The MindSpore data pipeline (the seeds' one) and the identical NumPy preprocessing used for prediction.

MnistDataset -> map Rescale(1/255) -> Normalize(0.1307, 0.3081) -> HWC2CHW on "image",
TypeCast(int32) on "label" -> shuffle (a random sampler over the split's indices) -> batch.
"""
from __future__ import annotations

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import numpy as np

from core.data.folders import MnistFolder

MEAN, STD = 0.1307, 0.3081


def preprocess_numpy(images: np.ndarray) -> np.ndarray:
    """uint8 (N, 28, 28) -> float32 (N, 1, 28, 28), exactly what the pipeline feeds the network."""
    x = images.astype(np.float32) * np.float32(1.0 / 255.0)
    x = (x - np.float32(MEAN)) / np.float32(STD)
    return x[:, None, :, :]


def image_transforms():
    return [vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(mean=(MEAN,), std=(STD,)), vision.HWC2CHW()]


# Small, label-preserving distortions of handwriting (a 6 does not become a 9): measured to lift LeNet-5
# trained on the bundled 5,000 images on the official test set (bench/augmentation.py).
AUGMENT = dict(degrees=10.0, translate=(-0.1, 0.1, -0.1, 0.1), scale=(0.9, 1.1))  # translate: x min, max, y min, max


def augment_transforms():
    return [vision.RandomAffine(**AUGMENT)]


def create_dataset(folder: MnistFolder, split: str, indices: np.ndarray | None, batch_size: int,
                   shuffle: bool, num_parallel_workers: int = 1, drop_remainder: bool = False,
                   augment: bool = False):
    """A batched MindSpore dataset over `indices` of one split (all samples when indices is None).

    augment adds random affine distortions (training only). Shuffling and augmentation use the global
    dataset seed (mindspore.dataset.config.set_seed); iterate it through ONE
    iterator created with num_epochs=N, so that every epoch gets a fresh order.
    """
    if indices is None:
        sampler = ds.RandomSampler() if shuffle else ds.SequentialSampler()
    else:
        idx = [int(i) for i in indices]
        sampler = ds.SubsetRandomSampler(idx) if shuffle else ds.SubsetSampler(idx)
    dataset = ds.MnistDataset(str(folder.split_dir(split)), usage=split, sampler=sampler)
    ops = (augment_transforms() if augment else []) + image_transforms()  # augment the raw HWC uint8 image
    dataset = dataset.map(ops, "image", num_parallel_workers=num_parallel_workers)
    dataset = dataset.map(transforms.TypeCast(ms.int32), "label", num_parallel_workers=num_parallel_workers)
    return dataset.batch(batch_size, drop_remainder=drop_remainder)
