"""MindSpore's own message classes for summary and lineage files (mindspore/train/summary_pb2.py, anf_ir_pb2.py,
lineage_pb2.py), loaded from the installed package without importing MindSpore itself: the files are plain
protobuf modules, and importing `mindspore` first costs ~1.5 s and its threads (measured with 2.10.0). They load
as the package `_mindspore_messages`; MindSpore imported later in the same process registers the same
descriptors again, which protobuf accepts."""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from functools import cache
from pathlib import Path

__all__ = ["summary_messages", "lineage_messages"]

PACKAGE = "_mindspore_messages"


@cache
def _package() -> str:
    spec = importlib.util.find_spec("mindspore")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("mindspore is not installed: its summary message classes come with it "
                                  "(pip install -r requirements.txt)")
    package = types.ModuleType(PACKAGE)
    package.__path__ = [str(Path(spec.origin).parent / "train")]
    sys.modules.setdefault(PACKAGE, package)
    return PACKAGE


def summary_messages():
    """The module holding Event, Summary and (through it) the graph's messages."""
    return importlib.import_module(f"{_package()}.summary_pb2")


def lineage_messages():
    """The module holding LineageEvent (training and evaluation lineage, the dataset graph)."""
    return importlib.import_module(f"{_package()}.lineage_pb2")
