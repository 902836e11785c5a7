"""Settings that change while a run trains, one LiveSetting entry a knob: the learning rate, momentum and weight
decay (optimizer entries, applied before a step and recorded on the curve) and a lesson's pacing, Step and slow
motion. The store keeps what is asked in one requests table (RunStore.ask / take), the worker hands the values
to core/training/live_values.py, the pages draw one row a knob (ui/live_knobs.py). No MindSpore here: the config
and the store read these ranges.

A new optimizer knob is one entry here, one way to set it in core/training/live_values.py and its locale lines."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal
from collections.abc import Callable

__all__ = ["LiveSetting", "LIVE_SETTINGS", "OPTIMIZER_SETTINGS", "live_setting", "optimizer_settings_of",
           "MAX_STEP_REQUEST", "MAX_STEP_DELAY_S", "LEARNING_RATE"]

MAX_STEP_REQUEST = 10_000  # a lesson's Step ×n: at most this many steps at once
MAX_STEP_DELAY_S = 5.0     # slow motion: the longest wait between two steps
LEARNING_RATE = "learning_rate"

Kind = Literal["optimizer", "pacing"]


@dataclass(frozen=True)
class LiveSetting:
    """One knob. `low`/`high` bound its value (`low_open`: low itself is refused); `integer`: whole numbers only.
    `parallel_ok`: it may change under data parallel (a rank that changed its optimizer alone would train another
    model, so optimizer knobs may not; slow motion needs no agreement). `once`: the worker takes the request and it
    is gone (a Step, a new rate); otherwise it stands until changed (slow motion's delay, kept on the run's row).
    `resumes`: asking it resumes a paused run (a Step: n steps, then a pause again).
    `applies`: whether the knob means anything for a run's config (momentum only under the Momentum optimizer);
    `config_field`: the config field that holds its value before any change."""
    name: str
    kind: Kind
    low: float
    high: float
    low_open: bool = False
    integer: bool = False
    parallel_ok: bool = False
    once: bool = True
    resumes: bool = False
    applies: Callable[[object], bool] = lambda config: True
    config_field: str | None = None

    def valid(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if self.integer and not float(value).is_integer():
            return False
        above_low = value > self.low if self.low_open else value >= self.low
        return above_low and value <= self.high

    def start_value(self, config) -> float | None:
        """Its value before any change (None: a pacing knob, which has none)."""
        return None if self.config_field is None else float(getattr(config, self.config_field))


LIVE_SETTINGS: dict[str, LiveSetting] = {s.name: s for s in (
    LiveSetting(LEARNING_RATE, "optimizer", 0.0, 10.0, low_open=True, config_field="learning_rate"),
    LiveSetting("momentum", "optimizer", 0.0, 0.999, config_field="momentum",
                applies=lambda config: getattr(config, "optimizer", None) == "momentum"),
    LiveSetting("weight_decay", "optimizer", 0.0, 1.0, config_field="weight_decay",  # nn.SGD takes a float only
                applies=lambda config: getattr(config, "optimizer", None) != "sgd"),
    LiveSetting("step", "pacing", 1, MAX_STEP_REQUEST, integer=True, resumes=True),
    LiveSetting("step_delay", "pacing", 0.0, MAX_STEP_DELAY_S, parallel_ok=True, once=False),
)}
OPTIMIZER_SETTINGS = tuple(name for name, s in LIVE_SETTINGS.items() if s.kind == "optimizer")


def live_setting(name: str) -> LiveSetting:
    """The entry of a knob (KeyError naming the known ones when there is none)."""
    try:
        return LIVE_SETTINGS[name]
    except KeyError:
        raise KeyError(f"no live setting {name!r}; known: {', '.join(LIVE_SETTINGS)}") from None


def optimizer_settings_of(config) -> tuple[LiveSetting, ...]:
    """The optimizer knobs that mean something for this config, in registry order."""
    return tuple(LIVE_SETTINGS[n] for n in OPTIMIZER_SETTINGS if LIVE_SETTINGS[n].applies(config))
