"""Export a trained checkpoint for deployment: MindIR (MindSpore Lite / ms.load) and ONNX, both checked on
this CPU build (mindspore 2.10) for LeNet-5 and the MLP. Export runs in Graph mode (ms.export compiles the
network); the input is the (1, 1, 28, 28) float32 tensor that core.data.pipeline.preprocess_numpy produces."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from core.model.export_check import refuse_unexportable

FORMATS = {"mindir": ("MINDIR", ".mindir"), "onnx": ("ONNX", ".onnx")}


def export(checkpoint_path: str | os.PathLike, fmt: str, out_dir: str | os.PathLike) -> Path:
    """Write <out_dir>/model<ext> from the checkpoint (CheckpointError when it cannot be loaded). The
    caller chooses Graph mode for the process (core.runtime.set_mode) and serialises MindSpore calls."""
    import mindspore as ms  # deferred: the Runs page imports FORMATS when it loads, without MindSpore

    from core.model import checkpoint
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    file_format, ext = FORMATS[fmt]
    model = checkpoint.load(checkpoint_path)
    refuse_unexportable(model.net, fmt)  # before MindSpore tries: a message naming the layer, not a C++ trace
    model.net.set_train(False)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f".model.{os.getpid()}.tmp"
    try:
        ms.export(model.net, ms.Tensor(np.zeros((1, 1, 28, 28), np.float32)), file_name=str(stem),
                  file_format=file_format)
        written = stem.with_name(stem.name + ext)
        if not written.exists() or written.stat().st_size == 0:
            raise OSError(f"MindSpore wrote no {file_format} file to {out_dir}")
        final = out_dir / f"model{ext}"
        os.replace(written, final)  # atomic: a reader never sees half a file
        return final
    finally:
        stem.with_name(stem.name + ext).unlink(missing_ok=True)

