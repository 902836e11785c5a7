"""The networks the studio trains, one module each in this folder, each registering a NetworkSpec (registry.py).
A new network is a new module here plus its locale labels: this package imports every module in it, in
the order of ORDER and then by name. Importing it does not import MindSpore."""
from __future__ import annotations

import importlib
import pkgutil

from core.networks.registry import (DiagramLayer, NetworkSpec, UnknownNetwork, known_network, network_names,
                                    network_spec, register_network, unused_fields)

__all__ = ["DiagramLayer", "NetworkSpec", "UnknownNetwork", "known_network", "network_names", "network_spec",
           "register_network", "unused_fields"]

ORDER = ("lenet5", "mlp")  # the pages' first choices; the rest follow by name


def _register_all() -> None:
    found = sorted((m.name for m in pkgutil.iter_modules(__path__) if m.name != "registry"),
                   key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    for name in found:
        importlib.import_module(f"{__name__}.{name}")


_register_all()
