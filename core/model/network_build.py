"""Networks as MindSpore cells, built from their registered specs (core.networks), and a layer summary
(output shapes and parameter counts)."""
from __future__ import annotations

from dataclasses import dataclass

import mindspore.nn as nn

from core.config import TrainConfig
from core.networks import network_spec
from core.networks.mlp import DEFAULT_HIDDEN
from core.networks.registry import NUM_CLASSES

INPUT_SHAPE = (1, 28, 28)


def build_network(name: str, hidden: tuple[int, ...] = DEFAULT_HIDDEN, num_classes: int = NUM_CLASSES) -> nn.Cell:
    """A fresh network; hidden: the MLP's hidden layer widths (networks without a `hidden` ignore it)."""
    return network_for(TrainConfig(network=network_spec(name).name, hidden=tuple(hidden)), num_classes)


def network_for(config, num_classes: int = NUM_CLASSES) -> nn.Cell:
    """The network a TrainConfig describes, on MindSpore's operators."""
    return network_spec(config.network).build(config, num_classes)


def training_network(config) -> nn.Cell:
    """The network a run trains: on the project's operators where its spec has them and they can be built here
    (core.kernels; STUDIO_CUSTOM_KERNELS=0 switches them off), else network_for(config)."""
    fast_build = network_spec(config.network).fast_build
    net = fast_build(config) if fast_build is not None else None
    return net if net is not None else network_for(config)


@dataclass(frozen=True)
class LayerRow:
    name: str
    kind: str
    output_shape: tuple[int, ...]
    params: int


def _out_shape(layer: nn.Cell, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shape inference for the layer kinds the networks use (no execution needed); a block of layers says its
    own with out_shape(shape)."""
    if hasattr(layer, "out_shape"):
        return layer.out_shape(shape)
    if isinstance(layer, nn.Conv2d):
        c, h, w = shape
        kh, kw = layer.kernel_size
        sh, sw = layer.stride
        if layer.pad_mode == "same":
            return (layer.out_channels, -(-h // sh), -(-w // sw))
        pad = layer.padding if isinstance(layer.padding, int) else layer.padding[0]
        pad = pad if layer.pad_mode == "pad" else 0
        return (layer.out_channels, (h + 2 * pad - kh) // sh + 1, (w + 2 * pad - kw) // sw + 1)
    if isinstance(layer, (nn.MaxPool2d, nn.AvgPool2d)):
        c, h, w = shape
        k = layer.kernel_size if isinstance(layer.kernel_size, int) else layer.kernel_size[-1]
        s = layer.stride if isinstance(layer.stride, int) else layer.stride[-1]
        return (c, (h - k) // s + 1, (w - k) // s + 1)
    if isinstance(layer, nn.Flatten):
        n = 1
        for s in shape:
            n *= s
        return (n,)
    if isinstance(layer, nn.Dense):
        return (layer.out_channels,)
    return shape


def summarize(net: nn.Cell) -> list[LayerRow]:
    """One row per leaf layer of features and classifier, in execution order, with output shape (without batch)
    and trainable parameter count (a BatchNorm's moving statistics are in its checkpoint, not in this count)."""
    rows: list[LayerRow] = []
    shape: tuple[int, ...] = INPUT_SHAPE  # the input's shape, without the batch
    for block_name in ("features", "classifier"):
        block = getattr(net, block_name)
        for i, layer in enumerate(block.cell_list):
            shape = _out_shape(layer, shape)
            params = sum(int(p.size) for p in layer.trainable_params())
            rows.append(LayerRow(f"{block_name}.{i}", type(layer).__name__, shape, params))
    return rows


def count_parameters(net: nn.Cell) -> int:
    return sum(int(p.size) for p in net.trainable_params())
