"""What a sweep is: the settings it varies (a list or a range each), its sampler, trials and seeds, whether it
prunes; parsed from "name=values" and checked before anything is queued."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from core.config import ConfigError, TrainConfig, parse_field
from core.messages import ExplainedValueError, Message

__all__ = ["Space", "SweepSpec", "parse_space", "SAMPLERS", "SOURCE", "SWEEPABLE", "MAX_TRIALS", "MAX_SEEDS",
           "ASK_AT_ONCE"]

SOURCE = "sweep"
SAMPLERS = ("grid", "random", "tpe")
NUMERIC = ("learning_rate", "momentum", "weight_decay", "batch_size", "epochs", "val_fraction", "patience")
CHOICE = ("network", "optimizer", "loss", "lr_schedule", "augment", "style", "mode", "hidden")
SWEEPABLE = NUMERIC + CHOICE
MAX_TRIALS = 200
MAX_SEEDS = 10
ASK_AT_ONCE = 20  # settings open at once, and asked for in one advance: a large sweep never floods the queue



@dataclass(frozen=True)
class Space:
    """The values one setting takes: a list (grid, or a choice for random/TPE) or a range (random/TPE)."""
    name: str
    values: tuple = ()
    low: float | None = None
    high: float | None = None
    log: bool = False

    @property
    def is_range(self) -> bool:
        return self.low is not None


def parse_space(text: str) -> Space:
    """"learning_rate=0.1,0.01" (a list) or "learning_rate=1e-4:1e-1:log" (a range; ":lin" or nothing: linear)."""
    name, sep, rest = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not rest.strip():
        raise ExplainedValueError("sweep_space_syntax", text=text)
    if name not in SWEEPABLE:
        raise ExplainedValueError("sweep_field", name=name, fields=", ".join(SWEEPABLE))
    if ":" in rest and name in NUMERIC:
        parts = rest.split(":")
        try:
            low, high = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            raise ExplainedValueError("sweep_space_syntax", text=text) from None
        log = len(parts) > 2 and parts[2].strip() == "log"
        if not (math.isfinite(low) and math.isfinite(high) and low < high) or (log and low <= 0):
            raise ExplainedValueError("sweep_range", text=text)
        return Space(name, low=low, high=high, log=log)
    sep_char = ";" if name == "hidden" else ","  # "64,64;128" lists MLP shapes
    try:
        values = tuple(parse_field(name, v.strip()) for v in rest.split(sep_char) if v.strip())
    except ConfigError as e:
        raise ExplainedValueError("sweep_value", name=name, why="; ".join(e.errors.values())) from None
    if not values:
        raise ExplainedValueError("sweep_space_syntax", text=text)
    return Space(name, values=tuple(dict.fromkeys(values)))


@dataclass(frozen=True)
class SweepSpec:
    base: TrainConfig
    spaces: tuple[Space, ...]
    sampler: str = "grid"
    trials: int = 0            # 0 with a grid: every combination
    seeds: int = 1             # runs per setting (a seed group): seeds base.seed, base.seed + 1, ...
    prune: bool = False
    name: str = ""

    def errors(self) -> list[Message]:
        out = []
        if self.sampler not in SAMPLERS:
            out.append(Message("sweep_sampler", {"sampler": self.sampler, "choices": ", ".join(SAMPLERS)}))
        if not self.spaces:
            out.append(Message("sweep_nothing_varies"))
        if self.sampler == "grid" and any(s.is_range for s in self.spaces):
            out.append(Message("sweep_grid_needs_lists"))
        if not 1 <= self.seeds <= MAX_SEEDS or not 0 <= self.trials <= MAX_TRIALS:
            out.append(Message("sweep_counts", {"seeds": MAX_SEEDS, "trials": MAX_TRIALS}))
        if self.sampler != "grid" and self.trials == 0:
            out.append(Message("sweep_counts", {"seeds": MAX_SEEDS, "trials": MAX_TRIALS}))
        if self.base.val_fraction == 0:
            out.append(Message("sweep_needs_validation"))
        if self.sampler == "grid" and not self.trials and self.planned_trials > MAX_TRIALS:
            out.append(Message("sweep_grid_too_big", {"n": self.planned_trials, "most": MAX_TRIALS}))
        return out

    @property
    def planned_trials(self) -> int:
        if self.sampler == "grid":
            grid = math.prod(len(s.values) for s in self.spaces)
            return min(grid, self.trials) if self.trials else grid
        return self.trials

    def to_json(self) -> str:
        d = asdict(self)
        d["base"] = self.base.to_dict()
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "SweepSpec":
        d = json.loads(text)
        d["base"] = TrainConfig.from_dict(d["base"])
        d["spaces"] = tuple(Space(s["name"], tuple(tuple(v) if isinstance(v, list) else v for v in s["values"]),
                                  s["low"], s["high"], s["log"]) for s in d["spaces"])
        return cls(**d)
