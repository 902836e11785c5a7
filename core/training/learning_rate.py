"""The learning rate while a run trains: changes asked for live (a lesson's "what if it were larger?") and
the config's recorded changes, replayed at the same steps by a re-run."""
from __future__ import annotations

import mindspore as ms
import mindspore.nn as nn

from core.training.control import Control
from core.training.events import LearningRateEvent

__all__ = ["LearningRates"]


class LearningRates:
    """Sets the optimizer's learning rate before a step. The optimizer keeps a float learning rate in a
    Parameter, an input of the compiled step graph, so a new value takes effect at the next step without
    recompiling. Written with ops.assign: Parameter.set_data changed the value but PyNative steps went on
    with the old rate (measured with mindspore 2.10: identical weights; tests/test_teaching.py)."""

    def __init__(self, optimizer: nn.Optimizer, changes: tuple[tuple[int, float], ...], first_step: int):
        self.optimizer = optimizer
        self.schedule = dict(changes)
        earlier = [step for step in self.schedule if step < first_step]
        if earlier:  # a resumed run trains on with the rate in force when it stopped
            self._set(self.schedule[max(earlier)])

    def before_step(self, step: int, control: Control) -> LearningRateEvent | None:
        """Apply a change for step (the one about to be taken), if any; the event to report it."""
        asked = control.learning_rate_request()
        if asked is not None:
            self._set(asked)
            return LearningRateEvent(step, asked)
        if step in self.schedule:
            self._set(self.schedule[step])
            return LearningRateEvent(step, self.schedule[step], replayed=True)
        return None

    def next_change(self, step: int) -> int | None:
        """The first scheduled change at or after step (None: none left)."""
        return min((s for s in self.schedule if s >= step), default=None)

    def current(self) -> float:
        return float(self.optimizer.learning_rate.asnumpy())

    def _set(self, learning_rate: float) -> None:
        ms.ops.assign(self.optimizer.learning_rate, ms.Tensor(learning_rate, ms.float32))
