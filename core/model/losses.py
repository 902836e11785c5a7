"""Loss functions: MindSpore's two cross-entropies and an example custom loss subclassing nn.LossBase."""
from __future__ import annotations

import mindspore.nn as nn
import mindspore.ops as ops


class LabelSmoothingCrossEntropy(nn.LossBase):
    """Cross-entropy against labels smoothed towards uniform: (1 - eps) * one_hot + eps / classes.

    An example of a custom loss: it subclasses nn.LossBase and uses get_loss() for the reduction.
    """

    def __init__(self, num_classes: int = 10, smoothing: float = 0.1, reduction: str = "mean"):
        super().__init__(reduction)
        self.num_classes = num_classes
        self.on_value = 1.0 - smoothing + smoothing / num_classes
        self.off_value = smoothing / num_classes
        self.log_softmax = ops.LogSoftmax(axis=-1)
        self.one_hot = ops.OneHot()

    def construct(self, logits, labels):
        target = self.one_hot(labels, self.num_classes, ops.scalar_to_tensor(self.on_value),
                              ops.scalar_to_tensor(self.off_value))
        per_sample = -(target * self.log_softmax(logits)).sum(-1)
        return self.get_loss(per_sample)


def build_loss(name: str) -> nn.Cell:
    if name == "softmax_ce":
        return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if name == "cross_entropy":
        return nn.CrossEntropyLoss()
    if name == "label_smoothing":
        return LabelSmoothingCrossEntropy()
    raise ValueError(f"unknown loss {name!r}")
