"""The learning rate while a run trains: its schedule (core/model/lr_schedules.py), changes asked for live (a
lesson's "what if it were larger?") and the config's recorded changes, replayed at the same steps by a re-run.
A change holds from its step on: under a schedule it replaces the rest of the schedule."""
from __future__ import annotations

import mindspore as ms
import mindspore.nn as nn
import numpy as np

from core.training.run_control import Control
from core.training.events import LearningRateEvent

__all__ = ["LearningRates"]


class LearningRates:
    """Sets the optimizer's learning rate before a step. A constant rate is a float in a Parameter, an input
    of the compiled step graph, so a new value takes effect at the next step without recompiling. Written
    with ops.assign: Parameter.set_data changed the value but PyNative steps went on with the old rate
    (measured with mindspore 2.10: identical weights; tests/process/test_teaching.py). A schedule is a Parameter
    holding every step's rate, indexed by the optimizer's global_step inside the graph (so K steps per call
    follow it); a change rewrites its tail."""

    def __init__(self, optimizer: nn.Optimizer, changes: tuple[tuple[int, float], ...], first_step: int):
        self.optimizer = optimizer
        self.schedule = dict(changes)
        self.scheduled = bool(optimizer.dynamic_lr)
        if self.scheduled:  # a resumed run picks its schedule up where it stopped
            ms.ops.assign(optimizer.global_step, ms.Tensor([first_step - 1], ms.int32))
        earlier = [step for step in self.schedule if step < first_step]
        if earlier:  # a resumed run trains on with the rate in force when it stopped
            self._set(max(earlier), self.schedule[max(earlier)])

    def before_step(self, step: int, control: Control) -> LearningRateEvent | None:
        """Apply a change for step (the one about to be taken), if any; the event to report it."""
        asked = control.learning_rate_request()
        if asked is not None:
            self._set(step, asked)
            return LearningRateEvent(step, asked)
        if step in self.schedule:
            self._set(step, self.schedule[step])
            return LearningRateEvent(step, self.schedule[step], replayed=True)
        return None

    def next_change(self, step: int) -> int | None:
        """The first scheduled change at or after step (None: none left)."""
        return min((s for s in self.schedule if s >= step), default=None)

    def current(self) -> float:
        """The rate of the next step."""
        if self.scheduled:
            rates = self._rates().asnumpy()
            return float(rates[min(int(self.optimizer.global_step.asnumpy()[0]), len(rates) - 1)])
        return float(self.optimizer.learning_rate.asnumpy())

    def _rates(self) -> ms.Parameter:
        return self.optimizer.learning_rate.learning_rate  # _IteratorLearningRate's Parameter of every step's rate

    def _set(self, step: int, learning_rate: float) -> None:
        if not self.scheduled:
            ms.ops.assign(self.optimizer.learning_rate, ms.Tensor(learning_rate, ms.float32))
            return
        rates = self._rates().asnumpy().copy()
        rates[max(step - 1, 0):] = learning_rate
        ms.ops.assign(self._rates(), ms.Tensor(rates.astype(np.float32)))
