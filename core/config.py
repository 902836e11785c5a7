"""The typed, frozen training configuration and its validation (no MindSpore import)."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from core.i18n import text
from core.live_settings import LEARNING_RATE, LIVE_SETTINGS, OPTIMIZER_SETTINGS
from core.networks import known_network, network_names, network_spec
from core.networks.mlp import DEFAULT_HIDDEN, MAX_HIDDEN_LAYERS, MAX_UNITS

NETWORKS = network_names()  # core/networks/: one module per network
STYLES = ("cell", "functional")
MODES = ("graph", "pynative")
OPTIMIZERS = ("momentum", "sgd", "adam")
LR_SCHEDULES = ("constant", "step", "cosine", "warmup_cosine", "one_cycle")  # core/model/lr_schedules.py
LOSSES = ("softmax_ce", "cross_entropy", "label_smoothing")
AMP_LEVELS = ("O0", "O1", "O2", "O3")
# Measured on the 2-core AVX-512 CPU, graph mode, batch 64: O1-O3 train correctly but are slower than O0
# (LeNet-5 ~33 vs ~24 ms/step, MLP ~20 vs ~5 ms/step): CPUs have no fast float16 path. The Configure
# page says so (configure.amp_note in core/locales).

LABELS = {
    **{name: network_spec(name).label for name in NETWORKS},
    "cell": "Cell: WithLossCell + TrainOneStepCell", "functional": "Functional: value_and_grad + optimizer",
    "graph": "Graph (compiled)", "pynative": "PyNative (eager)",
    "momentum": "Momentum", "sgd": "SGD", "adam": "Adam",
    "softmax_ce": "SoftmaxCrossEntropyWithLogits(sparse=True)", "cross_entropy": "CrossEntropyLoss",
    "label_smoothing": "Label-smoothing CE (custom nn.LossBase)",
    "constant": "Constant", "step": "Step decay (×0.1 at 1/2 and 3/4)", "cosine": "Cosine to 0",
    "warmup_cosine": "Warm-up (10 %) then cosine", "one_cycle": "One-cycle (up 30 %, then down)",
}

MAX_BATCH = 4096
MAX_VALIDATE_EVERY = 100_000
# K steps in one graph call: LeNet-5 and the MLP train with the same weights bit for bit and less overhead per
# step (bench/kstep_alone.py, bench/user_visible.py); larger K compiles longer (the loop is unrolled). Unless
# steps_per_call is set, K is the one of these with which an epoch takes the fewest calls (K-step calls and
# single steps), the smallest on a tie: each call costs ~1.8 ms beyond its steps' own time here, whatever K
# (MLP, 70 steps: 150 ms in 10 calls of 7, 135 ms in 2 calls of 35, 270 ms one step per call); up to 16,
# whose graph compiles in ~2 s (docs/performance.md, "K fits the epoch").
# A run shorter than its network's k_steps_from steps takes one step per call: its K-step graph's longer
# compilation would cost more than the calls save (docs/performance.md, "Short runs: one step per call").
AUTO_STEPS_PER_CALL = range(6, 17)
MAX_STEPS_PER_CALL = 64
MAX_EPOCHS = 1000
MAX_WORKERS = 64


class ConfigError(ValueError):
    """Invalid configuration; `errors` maps each bad field to a message for a person."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class TrainConfig:
    network: str = NETWORKS[0]
    style: str = "cell"
    mode: str = "graph"
    optimizer: str = "momentum"
    learning_rate: float = 0.01
    # How the learning rate moves over the run (LR_SCHEDULES); learning_rate is its peak.
    lr_schedule: str = "constant"
    momentum: float = 0.9
    weight_decay: float = 0.0
    loss: str = "softmax_ce"
    batch_size: int = 64
    epochs: int = 10
    seed: int = 42
    val_fraction: float = 0.1
    early_stopping: bool = False
    augment: bool = False  # random small rotations, shifts and scaling of training images (not validation)
    # Half the training images redrawn as Draw & predict shows a drawing to the model (core/data/drawn_look.py).
    drawn_look: bool = False
    patience: int = 3
    num_parallel_workers: int = 1
    amp_level: str = "O0"
    # Data-parallel worker processes (msrun). batch_size stays the global batch: each worker takes
    # batch_size / workers samples per step and gradients are averaged, so 1 or N workers train alike.
    workers: int = 1
    data_dir: str | None = None  # None: the bundled 5,000 images
    # Start from these weights instead of random ones (a fine-tune): a checkpoint file, or run:RUN_ID for a run of
    # the store (core/runs/worker/start_weights.py). The checkpoint's network must be this one.
    init_checkpoint: str | None = None
    # The MLP's hidden layers, units per layer ((): no hidden layer, i.e. softmax regression). The networks
    # whose spec does not list it among its shape_fields ignore it.
    hidden: tuple[int, ...] = DEFAULT_HIDDEN
    # Validate every N steps as well as after every epoch (0: after every epoch only), so that a short lesson
    # run still draws a validation curve with enough points.
    validate_every: int = 0
    # Live setting changes made while a run trained (core/live_settings.py): (step, setting, value), applied
    # before that step. A re-run carries them in its config and replays them at the same steps.
    setting_changes: tuple[tuple[int, str, float], ...] = ()
    # Training steps per graph call (Graph mode, Cell style, one process): 0 picks one for the epoch's length.
    # Pause, stop and a new learning rate act between calls; Step ×n, slow motion, validation every N steps,
    # a replayed change and each epoch's last step fall back to single steps where they need them.
    steps_per_call: int = 0

    def errors(self, lang: str = "en") -> dict[str, str]:
        """Every problem with this config, by field, for a person reading lang; empty when valid."""
        e: dict[str, str] = {}

        def say(field, code, /, **values):
            e[field] = text(lang, f"config.{code}", **values)

        for name, allowed in (("network", NETWORKS), ("style", STYLES), ("mode", MODES),
                              ("optimizer", OPTIMIZERS), ("lr_schedule", LR_SCHEDULES), ("loss", LOSSES),
                              ("amp_level", AMP_LEVELS)):
            if getattr(self, name) not in allowed:
                say(name, "unknown_choice", name=name, value=repr(getattr(self, name)), choices=", ".join(allowed))

        def number(name, lo, hi, lo_open=False, integer=False):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
                say(name, "not_whole" if integer else "not_number", value=repr(v))
            elif isinstance(v, float) and not math.isfinite(v):  # an int is finite (and may be too big for a float)
                say(name, "not_finite", value=repr(v))
            elif v < lo or (lo_open and v == lo) or v > hi:
                say(name, "range_open" if lo_open else "range", lo=lo, hi=hi, value=_shown(v))

        number("learning_rate", 0, 10, lo_open=True)
        number("momentum", 0, 0.999)
        number("weight_decay", 0, 1)
        number("batch_size", 1, MAX_BATCH, integer=True)
        number("epochs", 1, MAX_EPOCHS, integer=True)
        number("seed", 0, 2**31 - 1, integer=True)
        number("val_fraction", 0, 0.5)
        number("patience", 1, 100, integer=True)
        number("num_parallel_workers", 1, 8, integer=True)
        number("workers", 1, MAX_WORKERS, integer=True)
        if "workers" not in e and "batch_size" not in e and self.batch_size % self.workers:
            say("batch_size", "uneven_batch", batch=self.batch_size, workers=self.workers)
        number("validate_every", 0, MAX_VALIDATE_EVERY, integer=True)
        number("steps_per_call", 0, MAX_STEPS_PER_CALL, integer=True)
        self._shape_errors(say)
        for name in ("augment", "drawn_look"):
            if not isinstance(getattr(self, name), bool):
                say(name, "not_bool", value=repr(getattr(self, name)))
        if not isinstance(self.early_stopping, bool):
            say("early_stopping", "not_bool", value=repr(self.early_stopping))
        elif self.early_stopping and "val_fraction" not in e and self.val_fraction == 0:
            say("early_stopping", "needs_validation")
        return e

    def _shape_errors(self, say) -> None:
        hidden = self.hidden
        if not isinstance(hidden, tuple) or not all(isinstance(u, int) and not isinstance(u, bool) for u in hidden):
            say("hidden", "hidden_not_units", value=_shown(hidden, 40))
        elif len(hidden) > MAX_HIDDEN_LAYERS:
            say("hidden", "hidden_too_deep", n=len(hidden), most=MAX_HIDDEN_LAYERS)
        elif any(not 1 <= u <= MAX_UNITS for u in hidden):
            say("hidden", "hidden_units_range", most=MAX_UNITS, value=_shown(field_text("hidden", hidden), 40))
        if not _valid_changes(self.setting_changes):
            say("setting_changes", "setting_changes_invalid", value=_shown(self.setting_changes, 60))

    def validate(self) -> "TrainConfig":
        e = self.errors()
        if e:
            raise ConfigError(e)
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TrainConfig":
        """Build from a dict (unknown keys are refused, missing keys take defaults). Not validated."""
        d = _renamed(d)
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError({k: "unknown setting" for k in unknown})
        if isinstance(d.get("hidden"), list):  # JSON has lists only
            d["hidden"] = tuple(d["hidden"])
        if isinstance(d.get("setting_changes"), list):
            d["setting_changes"] = tuple(tuple(c) if isinstance(c, list) else c for c in d["setting_changes"])
        return cls(**d)

    @classmethod
    def from_json(cls, s: str) -> "TrainConfig":
        return cls.from_dict(json.loads(s))

    def with_(self, **changes) -> "TrainConfig":
        return replace(self, **changes)

    @property
    def shape_label(self) -> str:
        """The network's shape in a few characters: "LeNet-5", "MLP 784-64-64-10"."""
        if self.network not in NETWORKS:
            return self.network
        return network_spec(self.network).shape_label(self)

    def steps_per_call_for(self, parallel: bool, steps_per_epoch: int = 1, compiled_ahead: bool = False) -> int:
        """K for this run: several steps per call only where they are one compiled graph (Graph mode, Cell
        style) and one process (a data-parallel step all-reduces; kept one call per step). Unless set: one
        where the run is too short for the K-step graph's longer compilation to pay back (fewer steps than its
        network's k_steps_from), unless that graph is compiled ahead, before the run (a warm worker's);
        else the K of AUTO_STEPS_PER_CALL with which the epoch's steps before its last (a single step: it
        returns the gradients) take the fewest calls, K-step calls and the single steps left over, the
        smallest K on a tie: 71 steps take 14 (5 calls), 36 take 7 (5 calls; 16 would take 2 and 3 single
        steps)."""
        if self.mode != "graph" or self.style != "cell" or parallel or self.workers > 1:
            return 1
        if self.steps_per_call:
            return self.steps_per_call
        spec = known_network(self.network)
        if not compiled_ahead and spec is not None and steps_per_epoch * self.epochs < spec.k_steps_from:
            return 1
        steps = steps_per_epoch - 1
        return min(AUTO_STEPS_PER_CALL, key=lambda k: (steps // k + steps % k, k))

    @property
    def worker_batch(self) -> int:
        """Samples per step on each data-parallel worker."""
        return self.batch_size // max(self.workers, 1)


def parse_fields(values: dict[str, Any], lang: str = "en") -> tuple[dict[str, Any], dict[str, str]]:
    """Parse several fields from text (or already typed values); returns (parsed, errors by field)."""
    parsed, errors = {}, {}
    for name, value in values.items():
        try:
            parsed[name] = parse_field(name, value, lang)
        except ConfigError as e:
            errors.update(e.errors)
    return parsed, errors


def parse_field(name: str, raw: Any, lang: str = "en") -> Any:
    """Parse one field from text (URL query values, CLI) to its type; raise ConfigError with a message."""
    kinds = {f.name: f.type for f in fields(TrainConfig)}
    if name not in kinds:
        raise ConfigError({name: text(lang, "config.unknown_setting")})
    kind = kinds[name]
    if name in ("hidden", "setting_changes") and not isinstance(raw, str):
        return raw  # already typed (a widget's value, a tuple from code)
    text_ = str(raw).strip()
    if name == "hidden":
        return _parse_hidden(text_, lang)
    if name == "setting_changes":
        return _parse_setting_changes(text_, lang)
    try:
        if kind in ("int", "float") and (not text_.isascii() or "_" in text_):
            raise ValueError  # Python also reads "１" (a full-width digit) and "1_000"; a person would not
        if kind == "int":
            return int(text_)
        if kind == "float":
            return float(text_)
        if kind == "bool":
            if text_.lower() in ("1", "true", "yes", "on"):
                return True
            if text_.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
    except ValueError:
        raise ConfigError({name: text(lang, "config.not_valid", value=repr(text_),
                                      kind=text(lang, f"config.kind_{kind}"))}) from None
    if name in ("data_dir", "init_checkpoint"):
        return text_ or None
    return text_


def _shown(value: Any, most: int = 24) -> str:
    """A value as a message shows it: a 400-digit number from a link is cut, not printed whole."""
    text_ = value if isinstance(value, str) else repr(value)
    return text_ if len(text_) <= most else f"{text_[:most - 1]}… ({len(text_)} characters)"


def _parse_hidden(text_: str, lang: str) -> tuple[int, ...]:
    """"64,64" -> (64, 64); "" or "none" -> () (no hidden layer)."""
    if text_.lower() in ("", "none", "()"):
        return ()
    try:
        parts = [p.strip() for p in text_.strip("()[] ").split(",") if p.strip()]
        if not all(p.isascii() and p.isdigit() for p in parts):
            raise ValueError
        return tuple(int(p) for p in parts)
    except ValueError:
        raise ConfigError({"hidden": text(lang, "config.hidden_not_units", value=repr(text_))}) from None


def _parse_setting_changes(text_: str, lang: str) -> tuple[tuple[int, str, float], ...]:
    """"120:0.05,300:momentum=0.5" -> ((120, "learning_rate", 0.05), (300, "momentum", 0.5)); "" -> (). A bare
    value is a learning rate (the form of links made before momentum and weight decay could change)."""
    if not text_:
        return ()
    try:
        out = []
        for part in text_.split(","):
            step, change = part.split(":")
            setting, _, value = change.rpartition("=")
            if not (step.strip().isascii() and value.strip().isascii()):
                raise ValueError
            out.append((int(step), setting.strip() or LEARNING_RATE, float(value)))
        return tuple(out)
    except ValueError:
        raise ConfigError({"setting_changes": text(lang, "config.setting_changes_invalid",
                                                   value=repr(text_))}) from None


def _valid_changes(changes: object) -> bool:
    """Whether changes are (step, optimizer setting, value) triples with values in the setting's range, by
    step, one a setting and step."""
    if not isinstance(changes, tuple) or not all(isinstance(c, tuple) and len(c) == 3 for c in changes):
        return False
    for step, setting, value in changes:
        if (isinstance(step, bool) or not isinstance(step, int) or step < 1 or setting not in OPTIMIZER_SETTINGS
                or not LIVE_SETTINGS[setting].valid(value)):
            return False
    keys = [(step, setting) for step, setting, _ in changes]
    return [step for step, _ in keys] == sorted(step for step, _ in keys) and len(set(keys)) == len(keys)


def _renamed(d: dict[str, Any]) -> dict[str, Any]:
    """A stored config with its fields' old names read as today's: lr_changes ((step, rate) pairs, before
    momentum and weight decay could change during training) is setting_changes."""
    d = dict(d)
    if "lr_changes" in d and "setting_changes" not in d:
        pairs = d.pop("lr_changes")
        d["setting_changes"] = [[c[0], LEARNING_RATE, c[1]] if isinstance(c, (list, tuple)) and len(c) == 2 else c
                                for c in pairs] if isinstance(pairs, (list, tuple)) else pairs
    return d


def field_text(name: str, value: Any) -> str:
    """A setting as text, as a link or the command line takes it back (parse_field's inverse)."""
    if name == "hidden":
        return ",".join(str(u) for u in value) if value else "none"
    if name == "setting_changes":
        return ",".join(f"{step}:{v:g}" if setting == LEARNING_RATE else f"{step}:{setting}={v:g}"
                        for step, setting, v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
