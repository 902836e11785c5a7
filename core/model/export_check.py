"""Proof that an exported model reads as its checkpoint does: the exported file is loaded the way a deployment
loads it (MindIR: ms.load + nn.GraphCell; ONNX: ONNX Runtime) and run on the same images; and a refusal,
before exporting, of a layer that has not been checked to export."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from core.messages import ExplainedValueError
from core.model.metrics import softmax

__all__ = ["Agreement", "agreement", "predict_exported", "refuse_unexportable", "EXPORTABLE_CELLS"]

# Layers checked to export to both formats on this build (mindspore 2.10, CPU) and to read the same afterwards
# (tests/test_export.py); containers hold no computation of their own.
EXPORTABLE_CELLS = frozenset({"Conv2d", "Dense", "ReLU", "MaxPool2d", "Flatten", "SequentialCell", "CellList",
                              "LeNet5", "MLP"})


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
                                      supported=", ".join(sorted(EXPORTABLE_CELLS - {"LeNet5", "MLP"})))


def predict_exported(path: str | os.PathLike, fmt: str, images: np.ndarray) -> np.ndarray:
    """Class probabilities of uint8 images (N, 28, 28) from an exported file, one image at a time: the file
    was exported for a batch of one."""
    from core.data.pipeline import preprocess_numpy  # deferred: MindSpore (also for ms.load below)
    x = preprocess_numpy(images)
    if fmt == "onnx":
        import onnxruntime as ort
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        logits = [session.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))]
    elif fmt == "mindir":
        import mindspore as ms
        cell = ms.nn.GraphCell(ms.load(str(path)))
        logits = [cell(ms.Tensor(x[i:i + 1])).asnumpy() for i in range(len(x))]
    else:
        raise ValueError(f"unknown export format {fmt!r}")
    return softmax(np.concatenate(logits)) if logits else np.zeros((0, 10), np.float32)


def agreement(fmt: str, reference: np.ndarray, exported: np.ndarray) -> Agreement:
    """Compare two (N, 10) probability arrays of the same images."""
    same = int((reference.argmax(1) == exported.argmax(1)).sum()) if len(reference) else 0
    diff = float(np.abs(reference - exported).max()) if len(reference) else 0.0
    return Agreement(fmt, len(reference), same, diff)
