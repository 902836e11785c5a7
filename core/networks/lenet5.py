"""LeNet-5, defined for 32x32 inputs, on MNIST's 28x28: the first convolution pads by 2 (the classic 28->32 zero
padding done by the layer itself), so every network takes the same (N, 1, 28, 28) tensor and training,
evaluation and prediction share one preprocessing path. It trains on the project's C++ operators
(core.kernels) where they can be built."""
from __future__ import annotations

import functools
from typing import NamedTuple

from core.kernels.custom_ops import custom_ops
from core.networks.registry import NUM_CLASSES, DiagramLayer, NetworkSpec, register_network


class LeNetCells(NamedTuple):
    plain: type      # LeNet5 on MindSpore's operators
    fast: type       # FastLeNet5(kernels): the same layers and parameter names on the project's operators


@functools.cache
def cells() -> LeNetCells:
    """The cell classes, made on first use (MindSpore is imported then, not with the registry)."""
    import mindspore.nn as nn  # deferred: MindSpore loads when a network is first built

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
        """The first convolution is conv_1ch, the second conv_valid, and the bias + ReLU + max pool after each
        convolution is one relu_pool. The same layers, parameters and names as LeNet5, so its checkpoints load
        into LeNet5 and back."""

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

    return LeNetCells(LeNet5, FastLeNet5)


def build(config, num_classes: int = NUM_CLASSES):
    return cells().plain(num_classes)


def fast_build(config):
    """LeNet-5 on the project's operators in float32 (None: mixed precision, switched off, or no compiler)."""
    if config.amp_level != "O0":
        return None
    kernels = custom_ops()
    return cells().fast(kernels) if kernels is not None else None


def operators_line(net) -> str:
    if isinstance(net, cells().fast):
        return "LeNet-5 trains on the project's C++ operators (core/kernels)"
    return ("LeNet-5 trains on MindSpore's own operators: mixed precision, STUDIO_CUSTOM_KERNELS=0, or no C++ "
            "compiler (python -m core.cli.kernels says which)")


def diagram(config) -> list[DiagramLayer]:
    return [DiagramLayer("input", 784), DiagramLayer("layer", 6 * 28 * 28, "conv 6@5×5"),
            DiagramLayer("layer", 6 * 14 * 14, "pool"), DiagramLayer("layer", 16 * 10 * 10, "conv 16@5×5"),
            DiagramLayer("layer", 16 * 5 * 5, "pool"), DiagramLayer("layer", 120, "dense"),
            DiagramLayer("layer", 84, "dense"), DiagramLayer("output", NUM_CLASSES)]


SPEC = register_network(NetworkSpec(
    name="lenet5", label="LeNet-5", build=build, fast_build=fast_build, operators_line=operators_line,
    diagram=diagram, shape_label=lambda config: "LeNet-5", exportable_cells=frozenset({"LeNet5"}),
    fallback_samples_per_s=5_000.0,
    onednn_isa="AVX2",  # oneDNN's AVX-512 convolution is ~20x slower here (core/runtime.py)
    k_steps_from=8000,  # one step per call trained best-5k's 3,950 steps sooner (docs/performance.md)
))
