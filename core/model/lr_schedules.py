"""Learning-rate schedules: the learning rate of every step of a run, built with MindSpore's own tools
(mindspore.nn.piecewise_constant_lr, cosine_decay_lr, warmup_lr). The optimizer takes the list and picks each
step's rate inside the compiled step graph (by its global_step), so K steps per graph call still follow it.

Each schedule is given per step (step_per_epoch=1 in MindSpore's functions, which otherwise hold a rate for a
whole epoch), so a short run's curve is smooth. The shapes are fixed fractions of the run, as in PyTorch's
defaults, so that one field says it all:
- step: the rate × 0.1 at half the run and again at three quarters;
- cosine: from the rate down to 0 along a half cosine;
- warmup_cosine: up from rate/W to the rate over the first 10 % of steps (W of them), then cosine to 0;
- one_cycle: up from rate/25 to the rate over the first 30 % along a cosine, then down to rate/250,000
  (PyTorch's OneCycleLR defaults: div_factor 25, final_div_factor 1e4, pct_start 0.3).
"""
from __future__ import annotations

import math

import numpy as np

from core.config import LR_SCHEDULES, TrainConfig
from core.live_settings import LEARNING_RATE

__all__ = ["LR_SCHEDULES", "schedule", "planned_rates", "rate_at", "rate_changes", "steps_per_epoch"]

WARMUP_FRACTION = 0.1
ONE_CYCLE_PEAK = 0.3
ONE_CYCLE_START_DIV = 25.0
ONE_CYCLE_FINAL_DIV = 1e4


def schedule(config: TrainConfig, steps_per_epoch: int) -> list[float] | None:
    """The rate of each step 1..epochs × steps_per_epoch (index 0 is step 1); None for a constant rate."""
    kind, lr = config.lr_schedule, float(config.learning_rate)
    total = max(int(steps_per_epoch) * config.epochs, 1)
    if kind == "constant":
        return None
    import mindspore.nn as nn  # deferred: pure Python in MindSpore, but importing MindSpore takes seconds

    if total < 4:  # too short to shape: MindSpore's functions need a step or more in each part
        return [lr] * total
    if kind == "step":
        half, three_quarters = total // 2, (3 * total) // 4
        return nn.piecewise_constant_lr([half, three_quarters, total], [lr, lr * 0.1, lr * 0.01])
    if kind == "cosine":
        return nn.cosine_decay_lr(0.0, lr, total, 1, total)
    if kind == "warmup_cosine":
        warm = max(int(total * WARMUP_FRACTION), 1)
        up = nn.warmup_lr(lr, warm + 1, 1, warm)[1:]  # its first step would be 0: start at lr / warm
        return up + nn.cosine_decay_lr(0.0, lr, total - warm, 1, total - warm)
    if kind == "one_cycle":
        rise = max(int(total * ONE_CYCLE_PEAK), 1)
        start = lr / ONE_CYCLE_START_DIV
        up = nn.cosine_decay_lr(start, lr, rise, 1, rise)[::-1]  # a cosine from start up to lr
        return up + nn.cosine_decay_lr(start / ONE_CYCLE_FINAL_DIV, lr, total - rise, 1, total - rise)
    raise ValueError(f"unknown learning-rate schedule {kind!r}; choose one of {', '.join(LR_SCHEDULES)}")


def planned_rates(config: TrainConfig, steps_per_epoch: int,
                  changes: tuple[tuple[int, float], ...] | None = None) -> np.ndarray:
    """Every step's rate: the schedule (or the constant rate), with each change (step, rate) holding from
    its step on — a change made while a run trains replaces the schedule from then, as in the worker."""
    total = max(int(steps_per_epoch) * config.epochs, 1)
    planned = schedule(config, steps_per_epoch)
    rates = np.full(total, config.learning_rate, np.float64) if planned is None else np.asarray(planned, np.float64)
    for step, rate in (rate_changes(config) if changes is None else changes):
        rates[max(step - 1, 0):] = rate
    return rates


def rate_changes(config: TrainConfig) -> tuple[tuple[int, float], ...]:
    """The config's replayed learning-rate changes, (step, rate) by step."""
    return tuple((step, value) for step, setting, value in config.setting_changes if setting == LEARNING_RATE)


def rate_at(config: TrainConfig, steps_per_epoch: int, step: int,
            changes: tuple[tuple[int, float], ...] | None = None) -> float:
    """The rate of step (1-based; 0 reads as the first step, past the end as the last)."""
    rates = planned_rates(config, steps_per_epoch, changes)
    return float(rates[min(max(step, 1), len(rates)) - 1])


def steps_per_epoch(config: TrainConfig, train_count: int) -> int:
    """Steps per epoch of a run on train_count training images, before it starts (as core.training.loop
    splits them: the validation share per digit, rounded, may move the count by an image or two)."""
    train = train_count - int(round(train_count * config.val_fraction))
    if config.workers > 1:
        return max(math.ceil((train // config.workers) / config.worker_batch), 1)
    return max(math.ceil(train / config.batch_size), 1)
