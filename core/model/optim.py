"""Optimizers by name."""
from __future__ import annotations

import mindspore.nn as nn

from core.config import TrainConfig


def build_optimizer(config: TrainConfig, params) -> nn.Optimizer:
    lr, wd = config.learning_rate, config.weight_decay
    if config.optimizer == "momentum":
        return nn.Momentum(params, learning_rate=lr, momentum=config.momentum, weight_decay=wd)
    if config.optimizer == "sgd":
        return nn.SGD(params, learning_rate=lr, weight_decay=wd)
    if config.optimizer == "adam":
        return nn.Adam(params, learning_rate=lr, weight_decay=wd)
    raise ValueError(f"unknown optimizer {config.optimizer!r}")
