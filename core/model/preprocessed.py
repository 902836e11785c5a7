"""A network behind the training's preprocessing, for export: its input is raw pixels (0-255), as a deployed
model's users have them (core/model/export.py)."""
from __future__ import annotations

import mindspore.nn as nn

__all__ = ["Preprocessed"]


class Preprocessed(nn.Cell):
    """x / 255, then (x - mean) / std, then the network: core.data.pipeline.preprocess_numpy in the graph."""

    def __init__(self, net: nn.Cell, mean: float, std: float):
        super().__init__()
        self.net, self.mean, self.std = net, mean, std

    def construct(self, x):
        return self.net((x * (1.0 / 255.0) - self.mean) / self.std)
