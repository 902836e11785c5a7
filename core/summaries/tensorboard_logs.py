"""TensorBoard event files (`events.out.tfevents.*`, as tensorboardX, PyTorch's SummaryWriter and tf.summary write
them): scalars (simple values, and TF2's scalar tensors), histograms, images and the graph, into the same
FolderContent as a MindSpore summary folder. The messages are tensorboardX's classes (already the studio's, for
its TensorBoard export; the `tensorboard` package would add ~10 MB with its server for no more than this), read
after core/summaries/records.py has checked each record's CRC."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tensorboardX.proto import event_pb2, graph_pb2

from core.summaries.content import FolderContent, GraphNode, HistogramPoint, ImagePoint, ScalarPoint

__all__ = ["TensorBoardReader", "is_event_file"]

FLOATS = {1: np.float32, 2: np.float64, 19: np.float16}  # tensorboardX's DataType numbers: DT_FLOAT, DOUBLE, HALF


def is_event_file(path: Path) -> bool:
    return path.name.startswith("events.out.tfevents.")


@dataclass
class TensorBoardReader:
    """Reads one log folder's event files, going on from where the previous read of each ended."""
    folder: Path
    content: FolderContent = field(init=False)
    offsets: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.content = FolderContent(self.folder)

    def read(self, final: bool = True) -> FolderContent:
        for _, data in self.content.new_records(self.offsets, is_event_file, final):
            _event(self.content, data)
        return self.content


def _event(c: FolderContent, data: bytes) -> None:
    event = event_pb2.Event()
    try:
        event.ParseFromString(data)
    except Exception:  # a record whose CRC held but whose bytes are no Event: counted, not fatal
        c.unknown["unparsable record"] += 1
        return
    kind = event.WhichOneof("what")
    if kind == "summary":
        for value in event.summary.value:
            _value(c, int(event.step), float(event.wall_time), value)
    elif kind == "graph_def":
        _graph(c, event.graph_def)
    elif kind != "file_version":
        c.unknown[kind or "empty event"] += 1


def _value(c: FolderContent, step: int, wall_time: float, value) -> None:
    kind = value.WhichOneof("value")
    tag = value.tag
    if kind == "simple_value":
        c.scalars.setdefault(tag, []).append(ScalarPoint(step, wall_time, float(value.simple_value)))
    elif kind == "histo":
        c.histograms.setdefault(tag, []).append(_histogram(step, wall_time, value.histo))
    elif kind == "image":
        c.add_image(tag, ImagePoint(step, wall_time, bytes(value.image.encoded_image_string), value.image.height,
                                    value.image.width))
    elif kind == "tensor" and (scalar := _scalar_tensor(value.tensor)) is not None:
        c.scalars.setdefault(tag, []).append(ScalarPoint(step, wall_time, scalar))
    else:
        plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else ""
        c.unknown[f"{plugin or kind or 'empty value'} ({tag})"] += 1


def _scalar_tensor(t) -> float | None:
    """TF2's tf.summary.scalar: a float tensor of one value."""
    dtype = FLOATS.get(t.dtype)
    if dtype is None or len(t.tensor_shape.dim) > 0:
        return None
    if t.tensor_content:
        values = np.frombuffer(t.tensor_content, dtype)
    else:
        values = np.asarray(list(t.float_val) or list(t.double_val) or list(t.half_val), np.float64)
    return float(values[0]) if values.size == 1 else None


def _histogram(step: int, wall_time: float, h) -> HistogramPoint:
    """TensorBoard's buckets end at bucket_limit (the last at ±DBL_MAX): the edges here start at the minimum and
    are kept within [min, max]."""
    limits = [min(max(limit, h.min), h.max) for limit in h.bucket_limit]
    return HistogramPoint(step, wall_time, tuple([h.min, *limits]), tuple(float(b) for b in h.bucket), float(h.min),
                          float(h.max), float(h.num), float(h.sum))


def _graph(c: FolderContent, data: bytes) -> None:
    graph = graph_pb2.GraphDef()
    try:
        graph.ParseFromString(data)
    except Exception:  # as in _event
        c.unknown["unparsable graph"] += 1
        return
    c.graph = [GraphNode(n.name.rsplit("/", 1)[-1], n.op, n.name.rsplit("/", 1)[0] if "/" in n.name else "",
                         n.name, tuple(n.input), None) for n in graph.node]
