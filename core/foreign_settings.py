"""Another tool's settings in the studio's words: a script's settings (core.track) or a summary's lineage
(core/app/summary_import.py) mapped onto the fields of the studio's config, keeping only values it accepts. No
MindSpore here: Compare reads what a run states without loading it."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from core.config import TrainConfig
from core.networks import known_network

ALIASES = {"lr": "learning_rate", "batch": "batch_size", "epoch": "epochs", "num_epochs": "epochs",
           "net": "network", "model": "network"}
# a MindSpore lineage's optimizer class, as the studio names it
LINEAGE_OPTIMIZERS = {"Momentum": "momentum", "SGD": "sgd", "Adam": "adam"}


def stated_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The script's settings that name a field of the studio's config (or an alias: lr, batch, num_epochs, ...)
    and hold a value the studio accepts, under the field's name: what the run itself says of those settings."""
    names = {f.name for f in fields(TrainConfig)}
    chosen, stated = TrainConfig(), {}
    for key, value in config.items():
        name = ALIASES.get(key, key)
        if name in names and name not in ("data_dir", "init_checkpoint"):
            candidate = chosen.with_(**{name: tuple(value) if isinstance(value, list) else value})
            if name not in candidate.errors():
                chosen, stated[name] = candidate, getattr(candidate, name)
    return stated


def studio_config(config: Mapping[str, Any]) -> TrainConfig:
    """The studio's config of an external run: its defaults, with each of the script's stated settings."""
    return TrainConfig().with_(**stated_settings(config))


def lineage_settings(lineage: dict) -> dict:
    """The lineage's settings under the studio's names (stated_settings keeps those it accepts)."""
    out = {k: lineage[k] for k in ("learning_rate", "batch_size", "epochs") if lineage.get(k)}
    if isinstance(out.get("learning_rate"), float):  # MindSpore keeps it as float32: 0.009999999776482582
        out["learning_rate"] = float(f"{out['learning_rate']:.7g}")
    if lineage.get("optimizer") in LINEAGE_OPTIMIZERS:
        out["optimizer"] = LINEAGE_OPTIMIZERS[lineage["optimizer"]]
    network = "".join(ch for ch in str(lineage.get("network", "")).lower() if ch.isalnum())  # "LeNet5" -> "lenet5"
    if network and known_network(network) is not None:  # one of the studio's registered networks
        out["network"] = network
    return out
