"""LeNet-5 and MLP as MindSpore cells, and a layer summary (output shapes and parameter counts).

LeNet-5 is defined for 32x32 inputs; MNIST is 28x28. We pad inside the network (conv1 with padding=2),
which is the classic 28->32 zero padding done by the layer itself. Both networks therefore take the same
(N, 1, 28, 28) tensor, and training, evaluation and prediction share one preprocessing path that cannot
drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass

import mindspore.nn as nn

from core.config import DEFAULT_HIDDEN, MAX_HIDDEN_LAYERS
from core.model.kernels.custom_ops import custom_ops

INPUT_SHAPE = (1, 28, 28)
NUM_CLASSES = 10


class LeNet5(nn.Cell):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.features = nn.SequentialCell([
            nn.Conv2d(1, 6, 5, pad_mode="pad", padding=2, has_bias=True),  # 28x28 -> 28x28 (as 32 -> 28)
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        ])
        self.classifier = nn.SequentialCell([
            nn.Flatten(),
            nn.Dense(16 * 5 * 5, 120),
            nn.ReLU(),
            nn.Dense(120, 84),
            nn.ReLU(),
            nn.Dense(84, num_classes),
        ])

    def construct(self, x):
        return self.classifier(self.features(x))


class FastLeNet5(LeNet5):
    """LeNet-5 on the project's custom operators (core.model.kernels): the first convolution is conv_1ch, the
    second conv_valid, and the bias + ReLU + max pool after each convolution is one relu_pool. The same layers,
    parameters and names as LeNet5, so its checkpoints load into LeNet5 and back."""

    def __init__(self, kernels, num_classes: int = NUM_CLASSES):
        super().__init__(num_classes)
        self.conv_1ch = kernels.conv_1ch
        self.relu_pool = kernels.relu_pool
        self.conv_valid = kernels.conv_valid

    def construct(self, x):
        conv1 = self.features[0]
        conv2 = self.features[3]
        x = self.relu_pool(self.conv_1ch(x, conv1.weight), conv1.bias)
        x = self.relu_pool(self.conv_valid(x, conv2.weight), conv2.bias)
        return self.classifier(x)


class MLP(nn.Cell):
    """Dense + ReLU per hidden layer, then a Dense to the classes. Any shape is the same class in this file (Graph
    mode parses its source): parameter names stay classifier.<2i>.weight/bias, so a 512,512 checkpoint from
    before shapes were configurable still loads."""

    def __init__(self, num_classes: int = NUM_CLASSES, hidden: tuple[int, ...] = DEFAULT_HIDDEN):
        super().__init__()
        self.features = nn.SequentialCell([nn.Flatten()])
        layers, width = [], 28 * 28
        for units in hidden:
            layers += [nn.Dense(width, units), nn.ReLU()]
            width = units
        self.classifier = nn.SequentialCell(layers + [nn.Dense(width, num_classes)])

    def construct(self, x):
        return self.classifier(self.features(x))


def build_network(name: str, num_classes: int = NUM_CLASSES, hidden: tuple[int, ...] = DEFAULT_HIDDEN) -> nn.Cell:
    """A fresh network; hidden: the MLP's hidden layer widths (LeNet-5 has its classic shape)."""
    if name == "lenet5":
        return LeNet5(num_classes)
    if name == "mlp":
        return MLP(num_classes, tuple(hidden))
    raise ValueError(f"unknown network {name!r}; choose lenet5 or mlp")


def network_for(config) -> nn.Cell:
    """The network a TrainConfig describes."""
    return build_network(config.network, hidden=config.hidden)


def training_network(config) -> nn.Cell:
    """The network a run trains: LeNet-5 in float32 with the project's fused operator where it can be built
    (core.model.kernels; STUDIO_CUSTOM_KERNELS=0 switches it off), else network_for(config)."""
    if config.network == "lenet5" and config.amp_level == "O0":
        kernels = custom_ops()
        if kernels is not None:
            return FastLeNet5(kernels)
    return network_for(config)


def operators_line(net: nn.Cell) -> str:
    """For a LeNet-5 run's log: whose operators it trains on, and why not the project's when it does not."""
    if isinstance(net, FastLeNet5):
        return "LeNet-5 trains on the project's C++ operators (core/model/kernels)"
    return ("LeNet-5 trains on MindSpore's own operators: mixed precision, STUDIO_CUSTOM_KERNELS=0, or no C++ "
            "compiler (python -m core.cli.kernels says which)")


def mlp_hidden_from_shapes(shapes: dict[str, tuple]) -> tuple[int, ...] | None:
    """The hidden widths of an MLP checkpoint, from its Dense weights' shapes (None: not our MLP's names)."""
    dense = []
    for i in range(0, 2 * (MAX_HIDDEN_LAYERS + 1), 2):
        shape = shapes.get(f"classifier.{i}.weight")
        if shape is None:
            break
        dense.append(shape)
    if not dense or dense[0][1:] != (28 * 28,):
        return None
    return tuple(int(s[0]) for s in dense[:-1])


@dataclass(frozen=True)
class LayerRow:
    name: str
    kind: str
    output_shape: tuple[int, ...]
    params: int


def _out_shape(layer: nn.Cell, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shape inference for the layer kinds these networks use (no execution needed)."""
    if isinstance(layer, nn.Conv2d):
        c, h, w = shape
        kh, kw = layer.kernel_size
        sh, sw = layer.stride
        pad = layer.padding if isinstance(layer.padding, int) else layer.padding[0]
        pad = pad if layer.pad_mode == "pad" else 0
        return (layer.out_channels, (h + 2 * pad - kh) // sh + 1, (w + 2 * pad - kw) // sw + 1)
    if isinstance(layer, nn.MaxPool2d):
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
    """One row per leaf layer, in execution order, with output shape (without batch) and parameter count."""
    rows: list[LayerRow] = []
    shape: tuple[int, ...] = INPUT_SHAPE  # the input's shape, without the batch
    for block_name in ("features", "classifier"):
        block = getattr(net, block_name)
        for i, layer in enumerate(block.cell_list):
            shape = _out_shape(layer, shape)
            params = sum(int(p.size) for p in layer.get_parameters())
            rows.append(LayerRow(f"{block_name}.{i}", type(layer).__name__, shape, params))
    return rows


def count_parameters(net: nn.Cell) -> int:
    return sum(int(p.size) for p in net.trainable_params())
