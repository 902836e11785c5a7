"""What the studio knows of a network, as one frozen spec per network (as mindcv's `register_model`): its name and
labels, the config fields that shape it, how to build it, its diagram, the layers it exports, its operators and the
process settings it trains fastest with. No MindSpore here: a spec builds its cells only when asked.

A network's cells hold two SequentialCells, `features` and `classifier`, run one after the other: the layer table,
the statistics of every layer and Inside walk them leaf by leaf. A leaf that is not a plain MindSpore layer (a
residual block) says its own output shape with `out_shape(shape)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from collections.abc import Callable

__all__ = ["DiagramLayer", "NetworkSpec", "register_network", "network_spec", "known_network", "network_names",
           "UnknownNetwork"]

INPUT_PIXELS = 28 * 28
NUM_CLASSES = 10


@dataclass(frozen=True)
class DiagramLayer:
    """One column of the Configure page's network picture: `units` drawn as dots (at most a few)."""
    kind: Literal["input", "hidden", "layer", "output"]
    units: int
    label: str = ""  # for kind "layer": what it is ("conv 6@5×5"); "hidden": its number, from 1


@dataclass(frozen=True)
class NetworkSpec:
    name: str                                   # the config's and the command line's word: --network NAME
    label: str                                  # a few English words for --help; pages use locales' labels.NAME
    build: Callable[[Any, int], Any]            # (TrainConfig, classes) -> a fresh nn.Cell (imports MindSpore)
    diagram: Callable[[Any], list[DiagramLayer]]  # TrainConfig -> the picture's columns
    shape_label: Callable[[Any], str]           # TrainConfig -> "LeNet-5", "MLP 784-64-10"
    exportable_cells: frozenset[str]            # its own cell classes, checked to export to ONNX and MindIR
    fallback_samples_per_s: float               # the queue's estimate before any run of it has finished here
    shape_fields: tuple[str, ...] = ()          # TrainConfig fields that shape it (the MLP's "hidden")
    fast_build: Callable[[Any], Any] | None = None  # TrainConfig -> the cells on the project's C++ operators, or None
    operators_line: Callable[[Any], str] | None = None  # net -> the run log's line on whose operators it trains
    checkpoint_shapes: Callable[[dict[str, tuple]], list[dict]] = field(default=lambda shapes: [{}])
    """parameter shapes -> the config changes that could have made such a checkpoint ([{}]: the defaults')"""
    onednn_isa: str | None = None               # fastest measured oneDNN ISA cap (None: oneDNN's own choice)
    load_copies: str | None = None              # MS_DEV_SIDE_EFFECT_LOAD_ELIM level where it measured faster
    warm_worker: bool = True                    # keep a MindSpore process ready with it, so Start trains at once
    k_steps_from: int = 0                       # a run's fewest steps for which compiling K steps per call pays


class UnknownNetwork(KeyError):
    def __str__(self) -> str:
        return f"unknown network {self.args[0]!r}; choose one of {', '.join(network_names())}"


_SPECS: dict[str, NetworkSpec] = {}


def register_network(spec: NetworkSpec) -> NetworkSpec:
    """Add a network to the studio (each network module calls this once, on import)."""
    if spec.name in _SPECS:
        raise ValueError(f"two networks are named {spec.name!r}")
    _SPECS[spec.name] = spec
    return spec


def network_spec(name: str) -> NetworkSpec:
    try:
        return _SPECS[name]
    except KeyError:
        raise UnknownNetwork(name) from None


def known_network(name: str | None) -> NetworkSpec | None:
    """The spec of a network by name, or None for a name no module registered (an old run's, a typo)."""
    return _SPECS.get(name or "")


def network_names() -> tuple[str, ...]:
    """Every registered network, in the order the pages offer them."""
    return tuple(_SPECS)


def unused_fields(name: str) -> frozenset[str]:
    """The config fields that shape some registered network but not this one (a LeNet-5's `hidden`)."""
    spec = known_network(name)
    shaping = {f for s in _SPECS.values() for f in s.shape_fields}
    return frozenset(shaping - set(spec.shape_fields if spec else ()))
