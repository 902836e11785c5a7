"""What a training run reports, as typed events, and the callbacks that observe them (no MindSpore here).

The trainer emits, in this order:
  PhaseEvent("compiling" | "first_step")   before the first step (Graph mode compiles in it)
  PhaseEvent("training", first_step_seconds) after it
  StepEvent                                 after every step
  EpochMetrics                              after every epoch (validation included)
  LayersEvent                               epoch 0 (the initial weights) and after every epoch
  ValidationEvent                           every config.validate_every steps and after every epoch (when
                                            validate_every is set)
  SettingEvent                              before the step a new live setting is first used by
  LogEvent                                  a line for the run's log, at any time
and after every epoch whose weights are sound it calls Callback.on_epoch_end(net, metrics) (e.g. to
checkpoint), then ends the run if a callback set should_stop (early stopping); when the run ends it calls
Callback.on_train_end(net, status). Each event names its Callback method, so no one dispatches on a string.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar
from collections.abc import Iterable

from core.messages import Message
from core.training.layer_stats import LayerStat

__all__ = ["Phase", "PhaseEvent", "StepEvent", "EpochMetrics", "LayersEvent", "ValidationEvent", "SettingEvent",
           "LogEvent", "Event", "Callback", "CallbackList", "EventLog"]

_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr


class Phase(StrEnum):
    """Where the trainer is before and at its first step (a run's store row also says "loading data",
    "resuming" or "starting workers" before the trainer reports)."""
    COMPILING = "compiling"    # Graph mode: the first step compiles the graph
    FIRST_STEP = "first_step"  # PyNative: the first step, run eagerly
    TRAINING = "training"


@dataclass(frozen=True)
class PhaseEvent:
    handler: ClassVar[str] = "on_phase"
    phase: Phase
    first_step_seconds: float | None = None   # with "training": how long the first step took


@dataclass(frozen=True)
class StepEvent:
    handler: ClassVar[str] = "on_step"
    step: int
    epoch: int
    loss: float
    step_seconds: float
    samples_per_s: float      # over the timed steps so far (all but the first, which compiles)
    elapsed: float            # training seconds since the run started (resumed runs included)
    eta: float | None         # seconds left (slow motion's delays included); None until a step was timed
    total_steps: int


@dataclass(frozen=True)
class EpochMetrics:
    """One finished epoch: emitted by the trainer, kept in the run store, read back on resume."""
    handler: ClassVar[str] = "on_epoch"
    epoch: int
    train_loss: float
    train_acc: float | None   # None: a tracked script that did not say (core/track.py)
    val_loss: float | None = None
    val_acc: float | None = None
    epoch_seconds: float | None = None
    samples_per_s: float | None = None
    elapsed: float | None = None
    step: int | None = None   # steps taken by the end of this epoch (not stored: the steps table has them)
    eta: float | None = None
    best: bool = False        # the best validation loss so far
    # [true][predicted] counts on the validation split at this epoch's end (None: no validation split, or a run
    # that did not record them): the confusion matrix's time-lapse (ui/confusion_timelapse.py)
    val_confusion: tuple[tuple[int, ...], ...] | None = None

    def with_(self, **changes: Any) -> "EpochMetrics":
        return replace(self, **changes)


@dataclass(frozen=True)
class LayersEvent:
    handler: ClassVar[str] = "on_layers"
    epoch: int
    stats: list[LayerStat] = field(default_factory=list)


@dataclass(frozen=True)
class ValidationEvent:
    """Validation between epochs (config.validate_every), so a short run still has a validation curve."""
    handler: ClassVar[str] = "on_validation"
    step: int
    epoch: int
    val_loss: float | None  # None: not recorded (an imported run may record only its accuracy)
    val_acc: float | None


@dataclass(frozen=True)
class SettingEvent:
    """A live setting (core/live_settings.py: the learning rate, momentum, weight decay) changed: step is the
    first step that uses the new value."""
    handler: ClassVar[str] = "on_setting"
    step: int
    setting: str
    value: float
    replayed: bool = False   # from the config's setting_changes (a re-run), not asked for while training


@dataclass(frozen=True)
class LogEvent:
    handler: ClassVar[str] = "on_log"
    message: str


Event = PhaseEvent | StepEvent | EpochMetrics | LayersEvent | ValidationEvent | SettingEvent | LogEvent


class Callback:
    """Observes a run: override the methods of the events you need; each one does nothing by default.

    on_event receives every event first and dispatches it (override it to see them all). A callback that
    must not stop training when it fails (a progress display) sets critical = False: CallbackList then
    prints its error and carries on. The others' errors end the run, as a failed checkpoint must."""

    critical: ClassVar[bool] = True
    should_stop: bool = False  # set by a callback to end the run after this epoch (Lightning's trainer.should_stop)

    def on_event(self, event: Event) -> None:
        getattr(self, event.handler)(event)

    def on_phase(self, event: PhaseEvent) -> None:
        """Compilation starts, or training proper does."""

    def on_step(self, event: StepEvent) -> None:
        """A step updated the weights."""

    def on_epoch(self, event: EpochMetrics) -> None:
        """An epoch ended (after validation)."""

    def on_layers(self, event: LayersEvent) -> None:
        """Per-parameter weight and gradient statistics of an epoch."""

    def on_validation(self, event: ValidationEvent) -> None:
        """Validation between epochs (config.validate_every)."""

    def on_setting(self, event: SettingEvent) -> None:
        """A live setting (the learning rate, momentum, weight decay) changed before a step."""

    def on_log(self, event: LogEvent) -> None:
        """A line for the run's log."""

    def on_epoch_end(self, net, metrics: EpochMetrics) -> None:
        """The epoch's weights are sound (after on_epoch and on_layers): e.g. checkpoint the network."""

    def stop_message(self) -> Message | None:
        """Why this callback set should_stop, for the run's log and its row."""
        return None

    def on_train_end(self, net, status: str) -> None:
        """Training ended (completed, early_stopped, stopped or diverged), before the result is returned."""


class CallbackList:
    """Sends each event to every callback, in order."""

    def __init__(self, callbacks: Iterable[Callback | None] = ()):
        self.callbacks = [c for c in callbacks if c is not None]

    def emit(self, event: Event) -> None:
        for c in self.callbacks:
            self._call(c, c.on_event, event)

    def log(self, message: str) -> None:
        self.emit(LogEvent(message))

    def epoch_end(self, net, metrics: EpochMetrics) -> None:
        for c in self.callbacks:
            self._call(c, c.on_epoch_end, net, metrics)

    def stop_asked(self) -> Callback | None:
        """The first callback that set should_stop."""
        return next((c for c in self.callbacks if c.should_stop), None)

    def train_end(self, net, status: str) -> None:
        for c in self.callbacks:
            self._call(c, c.on_train_end, net, status)

    @staticmethod
    def _call(callback: Callback, method, *args) -> None:
        if callback.critical:
            method(*args)
            return
        try:
            method(*args)
        except Exception:  # an observer's fault is reported, not fatal (accelerate's CallbackHandler)
            _LOG.exception("callback %s failed (training goes on)", type(callback).__name__)


class EventLog(Callback, list):
    """Keeps every event in order (tests and benchmarks)."""

    def on_event(self, event: Event) -> None:
        self.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self if isinstance(e, kind)]
