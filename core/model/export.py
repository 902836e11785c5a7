"""Export a trained checkpoint for deployment: MindIR (MindSpore Lite / ms.load) and ONNX, both checked on
this CPU build (mindspore 2.10) for every registered network (tests/process/test_network_registry.py). Export
runs in Graph mode (ms.export compiles the network).

A file carries what it needs: its input is raw pixels — float32 (batch, 1, 28, 28), 0 to 255, a white digit on
black as MNIST — and the training's preprocessing (÷255, then (x − 0.1307) ÷ 0.3081) is inside the graph; the
batch is any size (MindIR: MindSpore's dynamic shape; ONNX: MindSpore exports ONNX for a fixed batch of one, whose
operators do not depend on it, so the batch axis is renamed "batch" afterwards). An ONNX file also records the
preprocessing, layout and classes in its metadata."""
from __future__ import annotations

import os
from pathlib import Path


import numpy as np

from core.config import TrainConfig
from core.formats import ModelFormat
from core.model.export_check import refuse_unexportable

FORMATS: dict[ModelFormat, tuple[str, str]] = {"mindir": ("MINDIR", ".mindir"), "onnx": ("ONNX", ".onnx")}
MEAN, STD = 0.1307, 0.3081  # core.data.pipeline's (tests/process/test_export.py checks they agree)


def metadata(config: TrainConfig) -> dict[str, str]:
    """What an exported file says of itself (ONNX metadata_props)."""
    return {"input": "raw pixels 0-255, float32, a white digit on black (as MNIST)",
            "layout": "NCHW: (batch, 1, 28, 28); the batch is any size",
            "preprocessing": f"inside the graph: x / 255, then (x - {MEAN}) / {STD}",
            "scale": "1/255", "mean": str(MEAN), "std": str(STD),
            "output": "logits of the digits 0-9 (softmax for probabilities)",
            "network": config.shape_label, "studio_config": config.to_json(),
            "producer": "MindSpore Training Studio"}


def export(checkpoint_path: str | os.PathLike, fmt: ModelFormat, out_dir: str | os.PathLike) -> Path:
    """Write <out_dir>/model<ext> from the checkpoint (CheckpointError when it cannot be loaded). The
    caller chooses Graph mode for the process (core.runtime.set_mode) and serialises MindSpore calls."""
    import mindspore as ms  # deferred: the Runs page imports FORMATS when it loads, without MindSpore

    from core.model import checkpoint
    from core.model.preprocessed import Preprocessed
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    file_format, ext = FORMATS[fmt]
    model = checkpoint.load(checkpoint_path)
    refuse_unexportable(model.net, fmt)  # before MindSpore tries: a message naming the layer, not a C++ trace
    net = Preprocessed(model.net, MEAN, STD)
    net.set_train(False)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f".model.{os.getpid()}.tmp"
    try:
        example = (ms.Tensor(shape=[None, 1, 28, 28], dtype=ms.float32) if fmt == "mindir"
                   else ms.Tensor(np.zeros((1, 1, 28, 28), np.float32)))  # ONNX: "not support dynamic shape"
        ms.export(net, example, file_name=str(stem), file_format=file_format)
        written = stem.with_name(stem.name + ext)
        if not written.exists() or written.stat().st_size == 0:
            raise OSError(f"MindSpore wrote no {file_format} file to {out_dir}")
        if fmt == "onnx":
            any_batch_onnx(written, metadata(model.config))
        final = out_dir / f"model{ext}"
        os.replace(written, final)  # atomic: a reader never sees half a file
        return final
    finally:
        stem.with_name(stem.name + ext).unlink(missing_ok=True)



def any_batch_onnx(path: Path, meta: dict[str, str]) -> None:
    """Rename the batch axis of an ONNX file's input and output to "batch" (any size) and record meta."""
    import onnx  # deferred: only an ONNX export needs it

    model = onnx.load(str(path))
    for value in (*model.graph.input, *model.graph.output):
        dim = value.type.tensor_type.shape.dim[0]
        dim.ClearField("dim_value")
        dim.dim_param = "batch"
    del model.graph.value_info[:]  # intermediate shapes inferred for a batch of one
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))


def predict_script(fmt: ModelFormat, file_name: str) -> str:
    """A runnable predict.py for a downloaded file: one image of a digit in, the digit out."""
    read = ('session = ort.InferenceSession("{f}")\n'
            'logits = session.run(None, {{session.get_inputs()[0].name: x}})[0]') if fmt == "onnx" else (
            'net = ms.nn.GraphCell(ms.load("{f}"))\nlogits = net(ms.Tensor(x)).asnumpy()')
    needs = "numpy onnxruntime pillow" if fmt == "onnx" else "numpy mindspore pillow"
    imports = "import onnxruntime as ort" if fmt == "onnx" else "import mindspore as ms"
    return (f"# predict.py: python predict.py digit.png   (pip install {needs})\n"
            f"import sys\n\nimport numpy as np\n{imports}\nfrom PIL import Image\n\n"
            "image = Image.open(sys.argv[1]).convert(\"L\").resize((28, 28))  # a white digit on black, as MNIST\n"
            "x = np.asarray(image, np.float32)[None, None]  # raw 0-255 pixels, (1, 1, 28, 28): the file normalises\n"
            + read.format(f=file_name) + "\n"
            "probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()\n"
            "print(f\"digit {int(logits.argmax())} ({probabilities.max():.0%})\")\n")
