"""Evaluate a network on a data split, and predict single images."""
from __future__ import annotations

import mindspore as ms
import mindspore.nn as nn
import numpy as np

from core.data.folders import MnistFolder, load_arrays, load_labels, stratified_split
from core.data.pipeline import create_dataset, preprocess_numpy
from core.model.losses import build_loss
from core.messages import ExplainedValueError
from core.model.metrics import Report, report, softmax
from core.model.shift_reading import averaged_probabilities

__all__ = ["NetWithLoss", "evaluate_batches", "evaluation_set", "evaluate", "evaluate_shifted", "predict"]


class NetWithLoss(nn.WithLossCell):
    """WithLossCell that also returns the logits, so that accuracy comes for free with each step."""

    def construct(self, data, label):
        logits = self._backbone(data)
        return self._loss_fn(logits, label), logits


def evaluate_batches(eval_net: nn.Cell, dataset) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Mean loss, accuracy, all logits and labels of a (loss, logits) network over a dataset."""
    eval_net.set_train(False)
    total_loss, n, all_logits, all_labels = 0.0, 0, [], []
    for data, label in dataset.create_tuple_iterator(num_epochs=1):
        loss, logits = eval_net(data, label)
        b = int(label.shape[0])
        total_loss += float(loss.asnumpy()) * b
        n += b
        all_logits.append(logits.asnumpy())
        all_labels.append(label.asnumpy())
    logits = np.concatenate(all_logits) if all_logits else np.zeros((0, 10), np.float32)
    labels = np.concatenate(all_labels) if all_labels else np.zeros((0,), np.int32)
    acc = float((logits.argmax(1) == labels).mean()) if n else float("nan")
    return (total_loss / n if n else float("nan")), acc, logits, labels


def evaluation_set(folder: MnistFolder, split: str, val_fraction: float) -> tuple[str, np.ndarray | None]:
    """(file split, indices) for "test" or "validation" (the run's held-out part of the training file)."""
    if split == "test":
        if not folder.has_test:
            raise ExplainedValueError("no_test_split", root=folder.root)
        return "test", None
    if split == "validation":
        labels = load_labels(folder, "train")
        _, val_idx = stratified_split(labels, val_fraction)
        if len(val_idx) == 0 and val_fraction <= 0:
            raise ExplainedValueError("no_validation_split")
        if len(val_idx) == 0:
            raise ExplainedValueError("empty_validation_split", fraction=val_fraction, n=len(labels))
        return "train", val_idx
    raise ValueError(f"unknown split {split!r}; choose test or validation")


def evaluate(net: nn.Cell, loss_name: str, folder: MnistFolder, split: str, val_fraction: float,
             batch_size: int = 500, shifts: bool = False) -> Report:
    """A metrics.Report for the network on the chosen split (shifts: each image read with its four 1-pixel
    shifts, evaluate_shifted)."""
    if shifts:
        return evaluate_shifted(net, folder, split, val_fraction)
    file_split, indices = evaluation_set(folder, split, val_fraction)
    dataset = create_dataset(folder, file_split, indices, batch_size, shuffle=False)
    loss, _, logits, labels = evaluate_batches(NetWithLoss(net, build_loss(loss_name)), dataset)
    ids = np.arange(len(labels)) if indices is None else np.asarray(indices)
    return report(logits, labels, loss, ids)


def evaluate_shifted(net: nn.Cell, folder: MnistFolder, split: str, val_fraction: float,
                     batch_size: int = 1000) -> Report:
    """A metrics.Report of the network reading each image with its four 1-pixel shifts, probabilities averaged
    (core.model.shift_reading). Its loss is the cross-entropy of the averaged probabilities, whatever loss the
    run trained with."""
    file_split, indices = evaluation_set(folder, split, val_fraction)
    images, labels = load_arrays(folder, file_split)
    if indices is not None:
        images, labels = images[indices], labels[indices]
    probabilities = np.concatenate(
        [averaged_probabilities(lambda views: predict(net, views), images[i:i + batch_size])
         for i in range(0, len(images), batch_size)] or [np.zeros((0, 10), np.float32)])
    log_p = np.log(np.clip(probabilities, 1e-12, 1.0))
    loss = float(-log_p[np.arange(len(labels)), labels.astype(np.int64)].mean()) if len(labels) else float("nan")
    ids = np.arange(len(labels)) if indices is None else np.asarray(indices)
    return report(log_p, labels, loss, ids)


def predict(net: nn.Cell, images: np.ndarray) -> np.ndarray:
    """Class probabilities (N, 10) for uint8 images (N, 28, 28), preprocessed exactly like training."""
    net.set_train(False)
    logits = net(ms.Tensor(preprocess_numpy(images))).asnumpy()
    return softmax(logits)
