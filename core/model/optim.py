"""Optimizers by name, with the run's learning-rate schedule (core/model/lr_schedules.py)."""
from __future__ import annotations

import mindspore.nn as nn

from core.config import TrainConfig
from core.model.lr_schedules import schedule


def build_optimizer(config: TrainConfig, params, steps_per_epoch: int = 1) -> nn.Optimizer:
    """A constant rate is a float (kept in a scalar Parameter); a schedule is a list of every step's rate,
    which the optimizer indexes by its global_step inside the step graph."""
    planned = schedule(config, steps_per_epoch)
    lr = config.learning_rate if planned is None else planned
    wd = config.weight_decay
    if config.optimizer == "momentum":
        return nn.Momentum(params, learning_rate=lr, momentum=config.momentum, weight_decay=wd)
    if config.optimizer == "sgd":
        return nn.SGD(params, learning_rate=lr, weight_decay=wd)
    if config.optimizer == "adam":
        return nn.Adam(params, learning_rate=lr, weight_decay=wd)
    raise ValueError(f"unknown optimizer {config.optimizer!r}")
