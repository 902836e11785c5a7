"""Optimizers by name, with the run's learning-rate schedule (core/model/lr_schedules.py) and a weight decay that
may change while the run trains (core/live_settings.py)."""
from __future__ import annotations

import mindspore as ms
import mindspore.nn as nn

from core.config import TrainConfig
from core.model.lr_schedules import schedule

__all__ = ["build_optimizer", "LiveWeightDecay"]


class LiveWeightDecay(nn.Cell):
    """The weight decay as a Cell (MindSpore's dynamic weight decay) whose value is a scalar Parameter, an input
    of the compiled step graph: core/training/live_values.py assigns a new value between steps. A float weight
    decay is a constant of the graph, and one of 0 leaves the decay out of it altogether, so it could not be
    raised from 0 during training. (nn.SGD refuses a Cell: under SGD it stays a float.)"""

    def __init__(self, value: float):
        super().__init__()
        self.value = ms.Parameter(ms.Tensor(value, ms.float32), name="live_weight_decay", requires_grad=False)

    def construct(self, global_step):
        return self.value


def build_optimizer(config: TrainConfig, params, steps_per_epoch: int = 1) -> nn.Optimizer:
    """A constant rate is a float (kept in a scalar Parameter); a schedule is a list of every step's rate,
    which the optimizer indexes by its global_step inside the step graph."""
    planned = schedule(config, steps_per_epoch)
    lr = config.learning_rate if planned is None else planned
    wd = LiveWeightDecay(config.weight_decay)
    if config.optimizer == "momentum":
        return nn.Momentum(params, learning_rate=lr, momentum=config.momentum, weight_decay=wd)
    if config.optimizer == "sgd":  # its weight decay stays as configured: nn.SGD refuses a dynamic one
        return nn.SGD(params, learning_rate=lr, weight_decay=config.weight_decay)
    if config.optimizer == "adam":
        return nn.Adam(params, learning_rate=lr, weight_decay=wd)
    raise ValueError(f"unknown optimizer {config.optimizer!r}")
