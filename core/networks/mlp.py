"""The MLP 784-hidden-10: Dense + ReLU per hidden layer, then a Dense to the classes; its shape (`hidden`) is
set with + and − on the Configure page, as in TensorFlow Playground."""
from __future__ import annotations

import functools

from core.networks.registry import INPUT_PIXELS, NUM_CLASSES, DiagramLayer, NetworkSpec, register_network

DEFAULT_HIDDEN = (512, 512)
MAX_HIDDEN_LAYERS = 6   # as TensorFlow Playground; deeper plain MLPs train badly on MNIST anyway
MAX_UNITS = 2048


@functools.cache
def cells() -> type:
    """The MLP's cell class, made on first use (MindSpore is imported then, not with the registry)."""
    import mindspore.nn as nn  # deferred: MindSpore loads when a network is first built

    class MLP(nn.Cell):
        """Any shape is this one class (Graph mode parses its source): parameter names stay
        classifier.<2i>.weight/bias, so a 512,512 checkpoint from before shapes were configurable still loads."""

        def __init__(self, num_classes: int = NUM_CLASSES, hidden: tuple[int, ...] = DEFAULT_HIDDEN):
            super().__init__()
            self.features = nn.SequentialCell([nn.Flatten()])
            layers, width = [], INPUT_PIXELS
            for units in hidden:
                layers += [nn.Dense(width, units), nn.ReLU()]
                width = units
            self.classifier = nn.SequentialCell(layers + [nn.Dense(width, num_classes)])

        def construct(self, x):
            return self.classifier(self.features(x))

    return MLP


def build(config, num_classes: int = NUM_CLASSES):
    return cells()(num_classes, tuple(config.hidden))


def hidden_from_shapes(shapes: dict[str, tuple]) -> tuple[int, ...] | None:
    """The hidden widths of an MLP checkpoint, from its Dense weights' shapes (None: not our MLP's names)."""
    dense = []
    for i in range(0, 2 * (MAX_HIDDEN_LAYERS + 1), 2):
        shape = shapes.get(f"classifier.{i}.weight")
        if shape is None:
            break
        dense.append(shape)
    if not dense or dense[0][1:] != (INPUT_PIXELS,):
        return None
    return tuple(int(s[0]) for s in dense[:-1])


def parameters(hidden: tuple[int, ...]) -> int:
    """Weights and biases of the MLP 784-hidden-10."""
    widths = (INPUT_PIXELS, *hidden, NUM_CLASSES)
    return sum((a + 1) * b for a, b in zip(widths, widths[1:], strict=False))


def diagram(config) -> list[DiagramLayer]:
    hidden = [DiagramLayer("hidden", units, str(i + 1)) for i, units in enumerate(config.hidden)]
    return [DiagramLayer("input", INPUT_PIXELS), *hidden, DiagramLayer("output", NUM_CLASSES)]


def checkpoint_shapes(shapes: dict[str, tuple]) -> list[dict]:
    hidden = hidden_from_shapes(shapes)
    return [{}] if hidden is None else [{}, {"hidden": hidden}]


SPEC = register_network(NetworkSpec(
    name="mlp", label="MLP (784-hidden-10, --hidden; default 512,512)", build=build, diagram=diagram,
    shape_label=lambda config: "MLP " + "-".join(str(n) for n in (INPUT_PIXELS, *config.hidden, NUM_CLASSES)),
    exportable_cells=frozenset({"MLP"}), fallback_samples_per_s=10_000.0, shape_fields=("hidden",),
    checkpoint_shapes=checkpoint_shapes,
    load_copies="3",  # ~4 % more samples per second without a weight copy per step (core/runtime.py)
    k_steps_from=700,  # K steps' ~1.5 s more compilation pays back after ~10 epochs of 71 steps (docs/performance.md)
))
