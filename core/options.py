"""Command-line options for every training setting, shared by `python -m core.cli.train` and
`python -m core.cli.sweep`."""
from __future__ import annotations

import argparse
from dataclasses import fields

import core.config as c
from core.config import LABELS, ConfigError, TrainConfig, field_text, parse_fields
from core.presets import PRESETS

__all__ = ["add_config_arguments", "config_from_args"]

METAVARS = {"hidden": "UNITS,UNITS", "setting_changes": "STEP:LR,STEP:NAME=VALUE", "init_checkpoint": "CKPT"}
HELP = {"hidden": "the MLP's hidden layers, units per layer (none: no hidden layer); ",
        "validate_every": "also validate every N steps (0: after each epoch only); ",
        "setting_changes": "change the learning rate (STEP:LR), momentum or weight_decay (STEP:momentum=0.5) "
                           "before these steps (a re-run's recorded changes); ",
        "steps_per_call": "training steps per graph call in Graph mode, Cell style, one process "
                          "(0: 1 for a run too short to pay for compiling more, else 6-16, to fit the epoch); ",
        "init_checkpoint": "start from this checkpoint's weights (a fine-tune; the same network): a file, or "
                           "run:RUN_ID for a run of the store; "}
CHOICES = {"network": "NETWORKS", "style": "STYLES", "mode": "MODES", "optimizer": "OPTIMIZERS",
           "lr_schedule": "LR_SCHEDULES", "loss": "LOSSES", "amp_level": "AMP_LEVELS"}


def add_config_arguments(ap: argparse.ArgumentParser) -> None:
    """One option per setting of TrainConfig (None when not given: the preset's or the default applies)."""
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        if f.name in CHOICES:
            choices = getattr(c, CHOICES[f.name])
            ap.add_argument(flag, dest=f.name, choices=choices, default=None,  # None: the preset's or the default
                            help=(" | ".join(f"{k}: {LABELS.get(k, k)}" for k in choices)
                                  + f" (default {default})").replace("%", "%%"))  # argparse formats help with %
        else:
            ap.add_argument(flag, dest=f.name, default=None, metavar=METAVARS.get(f.name, f.type.split(" ")[0].upper()),
                            help=HELP.get(f.name, "")
                            + f"default {field_text(f.name, default) if default is not None else None}"
                            + (" (the bundled 5,000 images)" if f.name == "data_dir" else ""))


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    values, errors = parse_fields({f.name: getattr(args, f.name) for f in fields(TrainConfig)
                                   if getattr(args, f.name) is not None})
    if errors:
        raise ConfigError(errors)
    base = PRESETS[args.preset] if getattr(args, "preset", None) else TrainConfig()
    return base.with_(**values).validate()
