"""The optimizer's live settings while a run trains (core/live_settings.py): the learning rate with its schedule
(core/model/lr_schedules.py), momentum and weight decay. Each changes before a step: asked for live (a lesson's
"what if it were larger?") or replayed from the config's setting_changes at the same step by a re-run. A change
holds from its step on: under a schedule a new rate replaces the rest of the schedule."""
from __future__ import annotations

import mindspore as ms
import mindspore.nn as nn
import numpy as np

from core.live_settings import LEARNING_RATE, OPTIMIZER_SETTINGS
from core.training.events import SettingEvent
from core.training.run_control import Control

__all__ = ["LiveValues", "knobs_of"]


class _ScalarKnob:
    """A setting kept in a scalar Parameter, an input of the compiled step graph: a new value takes effect at
    the next step without recompiling. Written with ops.assign: Parameter.set_data changed the value but
    PyNative steps went on with the old one (measured with mindspore 2.10: identical weights;
    tests/process/test_teaching.py)."""

    def __init__(self, parameter: ms.Parameter):
        self.parameter = parameter

    def set(self, step: int, value: float) -> None:
        ms.ops.assign(self.parameter, ms.Tensor(value, ms.float32))

    def current(self) -> float:
        return float(self.parameter.asnumpy())


class _ScheduledRate:
    """A learning-rate schedule: a Parameter holding every step's rate, indexed by the optimizer's global_step
    inside the graph (so K steps per call follow it); a change rewrites its tail."""

    def __init__(self, optimizer: nn.Optimizer):
        self.optimizer = optimizer

    def rates(self) -> ms.Parameter:
        return self.optimizer.learning_rate.learning_rate  # _IteratorLearningRate's Parameter of every step's rate

    def set(self, step: int, value: float) -> None:
        rates = self.rates().asnumpy().copy()
        rates[max(step - 1, 0):] = value
        ms.ops.assign(self.rates(), ms.Tensor(rates.astype(np.float32)))

    def current(self) -> float:
        rates = self.rates().asnumpy()
        return float(rates[min(int(self.optimizer.global_step.asnumpy()[0]), len(rates) - 1)])


def knobs_of(optimizer: nn.Optimizer) -> dict[str, _ScalarKnob | _ScheduledRate]:
    """How to set each live setting this optimizer has (core/model/optim.py keeps weight decay in a Parameter;
    only the Momentum optimizer has a momentum)."""
    knobs: dict[str, _ScalarKnob | _ScheduledRate] = {
        LEARNING_RATE: _ScheduledRate(optimizer) if optimizer.dynamic_lr else _ScalarKnob(optimizer.learning_rate)}
    if isinstance(optimizer, nn.Momentum):
        knobs["momentum"] = _ScalarKnob(optimizer.momentum)
    decay = getattr(getattr(optimizer, "weight_decay", None), "weight_decay", None)  # _WrappedWeightDecay's cell
    value = getattr(decay, "value", None)
    if isinstance(value, ms.Parameter):
        knobs["weight_decay"] = _ScalarKnob(value)
    return knobs


class LiveValues:
    """Sets the optimizer's live settings before a step: asked-for values first, else the config's replayed
    changes. A resumed run starts with the values in force when it stopped, and a scheduled rate picks its
    schedule up where it stopped."""

    def __init__(self, optimizer: nn.Optimizer, changes: tuple[tuple[int, str, float], ...], first_step: int):
        self.optimizer = optimizer
        self.knobs = knobs_of(optimizer)
        self.schedule: dict[int, dict[str, float]] = {}
        for step, setting, value in changes:
            self.schedule.setdefault(step, {})[setting] = value
        if optimizer.dynamic_lr:  # a resumed run picks its schedule up where it stopped
            ms.ops.assign(optimizer.global_step, ms.Tensor([first_step - 1], ms.int32))
        for step in sorted(s for s in self.schedule if s < first_step):  # a resumed run trains on with them
            for setting, value in self.schedule[step].items():
                self._set(step, setting, value)

    def before_step(self, step: int, control: Control) -> list[SettingEvent]:
        """Apply the changes for step (the one about to be taken); the events that report them."""
        asked = {s: v for s, v in control.setting_requests().items() if s in self.knobs}
        replayed = {s: v for s, v in self.schedule.get(step, {}).items() if s not in asked}
        events = [SettingEvent(step, s, v) for s, v in asked.items()]
        events += [SettingEvent(step, s, v, replayed=True) for s, v in replayed.items()]
        for e in events:
            self._set(step, e.setting, e.value)
        return sorted(events, key=lambda e: OPTIMIZER_SETTINGS.index(e.setting))

    def next_change(self, step: int) -> int | None:
        """The first replayed change at or after step (None: none left)."""
        return min((s for s in self.schedule if s >= step), default=None)

    def current(self, setting: str = LEARNING_RATE) -> float:
        """The value the next step uses."""
        return self.knobs[setting].current()

    def _set(self, step: int, setting: str, value: float) -> None:
        knob = self.knobs.get(setting)
        if knob is not None:  # a replayed change of a setting this optimizer lacks (momentum under Adam) is moot
            knob.set(step, value)
