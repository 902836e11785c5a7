"""Proof that an exported model reads as its checkpoint does: the exported file is loaded the way a deployment
loads it (MindIR: ms.load + nn.GraphCell; ONNX: ONNX Runtime) and run on the same images; and a refusal,
before exporting, of a layer that has not been checked to export."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from core.messages import ExplainedValueError
from core.model.metrics import softmax
from core.networks import network_names, network_spec

__all__ = ["Agreement", "agreement", "predict_exported", "refuse_unexportable", "EXPORTABLE_CELLS"]

# Layers checked to export to both formats on this build (mindspore 2.10, CPU) and to read the same afterwards
# (tests/process/test_export.py, tests/process/test_network_registry.py); containers hold no computation of their
# own. Each network's spec adds its own cells.
LAYERS = frozenset({"Conv2d", "Dense", "ReLU", "MaxPool2d", "Flatten", "SequentialCell", "CellList"})
EXPORTABLE_CELLS = LAYERS.union(*(network_spec(name).exportable_cells for name in network_names()))


@dataclass(frozen=True)
class Agreement:
    """How the exported file's reading of n images compares with the checkpoint's."""
    fmt: str
    n: int
    identical: int                 # images with the same predicted digit
    max_probability_diff: float    # the largest difference of any class probability over all images

    @property
    def all_identical(self) -> bool:
        return self.identical == self.n


def refuse_unexportable(net, fmt: str) -> None:
    """ExplainedValueError naming the first layer of net that has not been checked to export to fmt."""
    for name, cell in net.cells_and_names():
        kind = type(cell).__name__
        if kind not in EXPORTABLE_CELLS:
            raise ExplainedValueError("export_unsupported", layer=name or kind, kind=kind, fmt=fmt.upper(),
                                      supported=", ".join(sorted(EXPORTABLE_CELLS)))


def predict_exported(path: str | os.PathLike, fmt: str, images: np.ndarray) -> np.ndarray:
    """Class probabilities of uint8 images (N, 28, 28) from an exported file, all in one batch, fed as a user of
    the file feeds it: raw 0-255 pixels, float32 (N, 1, 28, 28) — the file does the preprocessing."""
    x = images.astype(np.float32)[:, None, :, :]
    if not len(x):
        return np.zeros((0, 10), np.float32)
    if fmt == "onnx":
        import onnxruntime as ort  # deferred: ONNX Runtime loads only to check an ONNX file
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        logits = session.run(None, {session.get_inputs()[0].name: x})[0]
    elif fmt == "mindir":
        import mindspore as ms  # deferred: MindSpore
        logits = ms.nn.GraphCell(ms.load(str(path)))(ms.Tensor(x)).asnumpy()
    else:
        raise ValueError(f"unknown export format {fmt!r}")
    return softmax(logits)


def agreement(fmt: str, reference: np.ndarray, exported: np.ndarray) -> Agreement:
    """Compare two (N, 10) probability arrays of the same images."""
    same = int((reference.argmax(1) == exported.argmax(1)).sum()) if len(reference) else 0
    diff = float(np.abs(reference - exported).max()) if len(reference) else 0.0
    return Agreement(fmt, len(reference), same, diff)
