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
from core.model.checkpoint_error import CheckpointError
from core.model.network_build import network_for
from core.networks import network_spec

CONFIG_KEY = "studio_config"
META_KEY = "studio_meta"
# LeNet-5 is ~0.25 MB, the MLP ~2.7 MB. In bytes as Streamlit counts server.maxUploadSize (1 MB = 10^6 bytes),
# so that the app's limit, Streamlit's and the label's "50 MB" are one and the same.
MAX_CHECKPOINT_BYTES = 50_000_000


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


def infer_network(params: dict) -> TrainConfig:
    """Which of our networks (and which shape, for a network its config shapes) a plain checkpoint (no config
    inside) belongs to, by parameter names and shapes."""
    shapes = _shapes(params)
    candidates = [TrainConfig(network=name, **changes) for name in NETWORKS
                  for changes in network_spec(name).checkpoint_shapes(shapes)]
    for config in candidates:
        if not config.errors():
            expected = {p.name: tuple(p.shape) for p in network_for(config).get_parameters()}
            if expected == shapes:
                return config
    shown = ", ".join(f"{k}{list(v)}" for k, v in list(shapes.items())[:6])
    raise CheckpointError("ckpt_foreign", networks=", ".join(NETWORKS), params=shown)


def read(path: str | os.PathLike, name: str | None = None) -> dict:
    """The raw parameter dict of a checkpoint file, or CheckpointError saying what is wrong with the file
    (calling it `name`, e.g. the file name a user uploaded, rather than where it is stored)."""
    path = Path(path)
    name = name or path.name
    if not path.exists():
        raise CheckpointError("ckpt_gone", path=path)
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError("ckpt_empty", name=name)
    if size > MAX_CHECKPOINT_BYTES:
        raise too_big(name, size)
    try:
        return ms.load_checkpoint(str(path))
    except (ValueError, RuntimeError, TypeError, OSError) as e:
        why = str(e).splitlines()[0].replace(str(path), name)
        raise CheckpointError("ckpt_unreadable", name=name, why=why) from None


def too_big(name: str, size: int) -> "CheckpointError":
    return CheckpointError("ckpt_too_big", name=name, mb=size / 1e6, limit=MAX_CHECKPOINT_BYTES / 1e6)


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
            raise CheckpointError("ckpt_bad_config", name=name, why=str(e)) from None
        try:
            meta = json.loads(str(params.pop(META_KEY, "{}")))
        except ValueError:
            meta = {}
    else:
        config = infer_network(params)
    params = {k: v for k, v in params.items() if isinstance(v, ms.Parameter)}
    net = network_for(config)
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
        raise CheckpointError("ckpt_misfit", name=name, network=config.network, detail="; ".join(detail))
    not_loaded, _ = ms.load_param_into_net(net, params, strict_load=True)
    if not_loaded:
        raise CheckpointError("ckpt_not_loaded", name=name, params=str(not_loaded))
    net.set_train(False)
    return LoadedModel(net, config, meta, Path(path))


def check_finite(model: LoadedModel, name: str) -> None:
    """CheckpointError when a weight is NaN or infinite: such a model predicts nonsense ("0 (nan%)")."""
    bad = [p.name for p in model.net.get_parameters() if not np.isfinite(p.asnumpy()).all()]
    if bad:
        raise CheckpointError("ckpt_not_finite", name=name, params=", ".join(bad[:4]))
