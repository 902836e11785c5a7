"""ResNet-8: a small residual CNN with BatchNorm sized for 28x28 (as He et al.'s CIFAR ResNets): a 3x3 stem,
three residual blocks (28x28, 14x14 and 7x7 maps, each block two 3x3 convolutions with BatchNorm and a
shortcut, a 1x1 convolution where the shape changes), a global average pool and one Dense to the classes."""
from __future__ import annotations

import functools
from typing import NamedTuple

from core.networks.registry import INPUT_PIXELS, NUM_CLASSES, DiagramLayer, NetworkSpec, register_network

WIDTHS = (8, 16, 32)  # channels of the three blocks; each block after the first halves the map


class ResNetCells(NamedTuple):
    net: type        # ResNet8
    block: type      # ResidualBlock(in_channels, out_channels, stride)


@functools.cache
def cells() -> ResNetCells:
    """The cell classes, made on first use (MindSpore is imported then, not with the registry)."""
    import mindspore.nn as nn  # deferred: MindSpore loads when a network is first built

    def conv_bn(c_in: int, c_out: int, kernel: int, stride: int) -> list:
        return [nn.Conv2d(c_in, c_out, kernel, stride=stride, pad_mode="same", has_bias=False),
                nn.BatchNorm2d(c_out)]

    class ResidualBlock(nn.Cell):
        """relu(bn(conv(relu(bn(conv(x))))) + shortcut(x)); the shortcut is x itself, or a strided 1x1
        convolution with BatchNorm where the block changes the channels or the map's size."""

        def __init__(self, c_in: int, c_out: int, stride: int):
            super().__init__()
            self.body = nn.SequentialCell(conv_bn(c_in, c_out, 3, stride) + [nn.ReLU()] + conv_bn(c_out, c_out, 3, 1))
            self.reshape = stride != 1 or c_in != c_out
            self.shortcut = nn.SequentialCell(conv_bn(c_in, c_out, 1, stride) if self.reshape else [nn.Identity()])
            self.relu = nn.ReLU()
            self.stride, self.c_out = stride, c_out

        def construct(self, x):
            return self.relu(self.body(x) + self.shortcut(x))

        def out_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
            """The block's output shape (without the batch) for an input of `shape`."""
            _, h, w = shape
            return (self.c_out, -(-h // self.stride), -(-w // self.stride))

    class ResNet8(nn.Cell):
        def __init__(self, num_classes: int = NUM_CLASSES):
            super().__init__()
            blocks, c_in = [], WIDTHS[0]
            for i, width in enumerate(WIDTHS):
                blocks.append(ResidualBlock(c_in, width, 1 if i == 0 else 2))
                c_in = width
            self.features = nn.SequentialCell(conv_bn(1, WIDTHS[0], 3, 1) + [nn.ReLU()] + blocks)
            side = 28 // 2 ** (len(WIDTHS) - 1)
            self.classifier = nn.SequentialCell([nn.AvgPool2d(kernel_size=side, stride=side), nn.Flatten(),
                                                 nn.Dense(WIDTHS[-1], num_classes)])

        def construct(self, x):
            return self.classifier(self.features(x))

    return ResNetCells(ResNet8, ResidualBlock)


def build(config, num_classes: int = NUM_CLASSES):
    return cells().net(num_classes)


def diagram(config) -> list[DiagramLayer]:
    side = 28
    stem = DiagramLayer("layer", WIDTHS[0] * side * side, f"conv {WIDTHS[0]}@3×3")
    layers = [DiagramLayer("input", INPUT_PIXELS), stem]
    for i, width in enumerate(WIDTHS):
        side = side if i == 0 else -(-side // 2)
        layers.append(DiagramLayer("layer", width * side * side, f"block {width}@{side}×{side}"))
    return layers + [DiagramLayer("layer", WIDTHS[-1], "avg pool"), DiagramLayer("output", NUM_CLASSES)]


SPEC = register_network(NetworkSpec(
    name="resnet", label="ResNet-8 (residual CNN with BatchNorm)", build=build,
    diagram=diagram, shape_label=lambda config: "ResNet-8",
    exportable_cells=frozenset({"ResNet8", "ResidualBlock", "BatchNorm2d", "AvgPool2d", "Identity"}),
    fallback_samples_per_s=1_000.0,
    onednn_isa="AVX2",  # a convolutional network, like LeNet-5 (core/runtime.py)
    k_steps_from=4000,  # ~7.5 s more compilation for K steps, ~2 ms less a step (docs/performance.md)
    warm_worker=False,  # a rarer choice: it starts a process of its own rather than hold one warm per server
))
