"""Checkpoints that carry the config that produced them, written atomically, loaded with clear errors."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import mindspore as ms
import mindspore.nn as nn
import numpy as np

from core.config import ConfigError, NETWORKS, TrainConfig
from core.model.networks import build_network

CONFIG_KEY = "studio_config"
META_KEY = "studio_meta"
# LeNet-5 is ~0.25 MB, the MLP ~2.7 MB. In bytes as Streamlit counts server.maxUploadSize (1 MB = 10^6 bytes),
# so that the app's limit, Streamlit's and the label's "50 MB" are one and the same.
MAX_CHECKPOINT_BYTES = 50_000_000


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message says why and what to do."""


@dataclass
class LoadedModel:
    net: nn.Cell
    config: TrainConfig
    meta: dict
    path: Path


def save(net: nn.Cell, config: TrainConfig, path: str | os.PathLike, meta: dict | None = None) -> Path:
    """Save weights + config + meta to path (must end in .ckpt) atomically: the old file stays intact until
    the new one is complete."""
    path = Path(path)
    if path.suffix != ".ckpt":
        raise ValueError(f"checkpoint path must end in .ckpt: {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.ckpt")
    try:
        ms.save_checkpoint(net, str(tmp), append_dict={CONFIG_KEY: config.to_json(),
                                                        META_KEY: json.dumps(meta or {}, default=str)})
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        # MindSpore writes through its own temporary name and leaves it behind when the disk is full
        tmp.with_suffix(".tmp").unlink(missing_ok=True)
    return path


def _shapes(params: dict) -> dict[str, tuple]:
    return {k: tuple(v.shape) for k, v in params.items() if isinstance(v, ms.Parameter)}


def infer_network(params: dict) -> str:
    """Which of our networks a plain checkpoint (no config inside) belongs to, by parameter names and shapes."""
    shapes = _shapes(params)
    for name in NETWORKS:
        expected = {p.name: tuple(p.shape) for p in build_network(name).get_parameters()}
        if expected == shapes:
            return name
    raise CheckpointError("This checkpoint does not match LeNet-5 or the MLP (its parameters are "
                          f"{', '.join(f'{k}{list(v)}' for k, v in list(shapes.items())[:6])}...). "
                          "Upload a checkpoint saved from one of these networks.")


def read(path: str | os.PathLike, name: str | None = None) -> dict:
    """The raw parameter dict of a checkpoint file, or CheckpointError saying what is wrong with the file
    (calling it `name`, e.g. the file name a user uploaded, rather than where it is stored)."""
    path = Path(path)
    name = name or path.name
    if not path.exists():
        raise CheckpointError(f"The checkpoint {path} no longer exists on disk. It may have been deleted; "
                              "retrain the run or upload the checkpoint again.")
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"{name} is empty (0 bytes). Upload a MindSpore .ckpt file.")
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(too_big(name, size))
    try:
        return ms.load_checkpoint(str(path))
    except (ValueError, RuntimeError, TypeError, OSError) as e:
        why = str(e).splitlines()[0].replace(str(path), name)
        raise CheckpointError(f"{name} is not a readable MindSpore checkpoint ({why}). "
                              "Upload a .ckpt file written by mindspore.save_checkpoint.") from None


def too_big(name: str, size: int) -> str:
    return f"{name} is {size / 1e6:.1f} MB, more than the {MAX_CHECKPOINT_BYTES / 1e6:.0f} MB limit for these networks."


def load(path: str | os.PathLike, name: str | None = None) -> LoadedModel:
    """Build the network a checkpoint was saved from and load its weights strictly (name: what to call the
    file in messages; its own name by default)."""
    name = name or Path(path).name
    params = read(path, name)
    meta: dict = {}
    if CONFIG_KEY in params:
        try:
            config = TrainConfig.from_json(str(params.pop(CONFIG_KEY))).validate()
        except (ConfigError, ValueError, TypeError) as e:
            raise CheckpointError(f"{name} carries an unreadable config ({e}).") from None
        try:
            meta = json.loads(str(params.pop(META_KEY, "{}")))
        except ValueError:
            meta = {}
    else:
        config = TrainConfig(network=infer_network(params))
    params = {k: v for k, v in params.items() if isinstance(v, ms.Parameter)}
    net = build_network(config.network)
    expected = {p.name: tuple(p.shape) for p in net.get_parameters()}
    got = _shapes(params)
    if expected != got:
        missing = sorted(set(expected) - set(got))
        wrong = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
        detail = []
        if missing:
            detail.append(f"missing {', '.join(missing[:4])}")
        if wrong:
            detail.append("wrong shape for " + ", ".join(f"{k} ({list(got[k])} instead of {list(expected[k])})"
                                                          for k in wrong[:3]))
        extra = sorted(set(got) - set(expected))
        if extra:
            detail.append(f"unexpected {', '.join(extra[:4])}")
        raise CheckpointError(f"{name} does not fit the {config.network} network: "
                              f"{'; '.join(detail)}. Was it saved from another architecture or number of classes?")
    not_loaded, _ = ms.load_param_into_net(net, params, strict_load=True)
    if not_loaded:
        raise CheckpointError(f"{name}: parameters {not_loaded} could not be loaded.")
    net.set_train(False)
    return LoadedModel(net, config, meta, Path(path))


def check_finite(model: LoadedModel, name: str) -> None:
    """CheckpointError when a weight is NaN or infinite: such a model predicts nonsense ("0 (nan%)")."""
    bad = [p.name for p in model.net.get_parameters() if not np.isfinite(p.asnumpy()).all()]
    if bad:
        raise CheckpointError(f"{name} holds weights that are not finite numbers (NaN or infinity) in "
                              f"{', '.join(bad[:4])}: the run that saved it diverged. Upload a checkpoint of a "
                              "run that trained soundly.")
