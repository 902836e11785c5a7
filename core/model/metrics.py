"""Classification metrics from logits and labels (NumPy only)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass
class Report:
    loss: float
    accuracy: float
    confusion: np.ndarray          # [true, predicted] counts, (classes, classes)
    precision: np.ndarray          # per class
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray
    predicted: np.ndarray          # per sample
    probabilities: np.ndarray      # per sample, (N, classes)
    labels: np.ndarray
    sample_ids: np.ndarray         # index of each sample in its split's file

    @property
    def misclassified(self) -> np.ndarray:
        """Positions (into this report's arrays) of the mistakes, most confident first."""
        wrong = np.flatnonzero(self.predicted != self.labels)
        conf = self.probabilities[wrong, self.predicted[wrong]]
        return wrong[np.argsort(-conf, kind="stable")]

    def cell(self, true: int, predicted: int) -> np.ndarray:
        """Positions of the samples of one confusion-matrix cell, most confident first."""
        pos = np.flatnonzero((self.labels == true) & (self.predicted == predicted))
        return pos[np.argsort(-self.probabilities[pos, predicted], kind="stable")]


def confusion_counts(labels: np.ndarray, predicted: np.ndarray, num_classes: int = 10) -> np.ndarray:
    """[true, predicted] counts, (classes, classes)."""
    confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(confusion, (np.asarray(labels).astype(np.int64), np.asarray(predicted).astype(np.int64)), 1)
    return confusion


def report(logits: np.ndarray, labels: np.ndarray, loss: float, sample_ids: np.ndarray | None = None,
           num_classes: int = 10) -> Report:
    labels = np.asarray(labels).astype(np.int64)
    predicted = logits.argmax(axis=1)
    confusion = confusion_counts(labels, predicted, num_classes)
    tp = np.diag(confusion).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(confusion.sum(0) > 0, tp / confusion.sum(0), 0.0)
        recall = np.where(confusion.sum(1) > 0, tp / confusion.sum(1), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return Report(loss=float(loss), accuracy=float((predicted == labels).mean()) if len(labels) else float("nan"),
                  confusion=confusion, precision=precision, recall=recall, f1=f1,
                  support=confusion.sum(1), predicted=predicted, probabilities=softmax(logits), labels=labels,
                  sample_ids=np.arange(len(labels)) if sample_ids is None else np.asarray(sample_ids))
