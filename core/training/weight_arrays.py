"""A network's weights as NumPy arrays, and back (early stopping, resume, checksums)."""
from __future__ import annotations

import hashlib

import mindspore as ms
import mindspore.nn as nn
import numpy as np

__all__ = ["snapshot", "restore", "weights_checksum"]


def snapshot(net: nn.Cell) -> dict[str, np.ndarray]:
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


def restore(net: nn.Cell, weights: dict[str, np.ndarray]) -> None:
    params = {k: ms.Parameter(ms.Tensor(v), name=k) for k, v in weights.items()}
    not_loaded, _ = ms.load_param_into_net(net, params, strict_load=True)
    if not_loaded:
        raise RuntimeError(f"could not restore parameters {not_loaded}")


def weights_checksum(net: nn.Cell) -> str:
    """SHA-256 over every parameter's name and bytes (equal on every worker of a sound data-parallel run)."""
    h = hashlib.sha256()
    for p in sorted(net.get_parameters(), key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(p.asnumpy().tobytes())
    return h.hexdigest()
