"""MindSpore summary folders, as SummaryCollector and SummaryRecord write them (and MindInsight read them): files
named `*.summary.<time>.<host>_MS` hold Events (scalars, images, tensors, histograms, the graph), files ending
`_lineage` hold LineageEvents (hyperparameters, dataset, network, evaluation metrics). Read with the package's
own message classes (core/summaries/messages.py) after core/summaries/records.py has checked each record.

A folder is read file by file from where the last read stopped (FolderReader keeps the offsets), so a training
still writing is followed by reading again."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from core.summaries.content import (FolderContent, GraphNode, HistogramPoint, ImagePoint, ScalarPoint,
                                    TensorPoint)
from core.summaries.proto_classes import lineage_messages, summary_messages

__all__ = ["FolderReader", "is_summary_file"]

AUTO = "/auto"  # SummaryCollector's suffix of the tags it makes


def is_summary_file(path: Path) -> bool:
    name = path.name
    return ".summary." in name and (name.endswith("_MS") or name.endswith("_lineage"))


@dataclass
class FolderReader:
    """Reads one training folder into its content, going on from where the previous read of each file ended."""
    folder: Path
    content: FolderContent = field(init=False)
    offsets: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.content = FolderContent(self.folder)

    def read(self, final: bool = True) -> FolderContent:
        """Read what is new. final: the files are complete (a last record cut short is truncated, not pending)."""
        for path, data in self.content.new_records(self.offsets, is_summary_file, final):
            if path.name.endswith("_lineage"):
                _lineage_event(self.content, data)
            else:
                _summary_event(self.content, data)
        return self.content


def _summary_event(c: FolderContent, data: bytes) -> None:
    event = summary_messages().Event()
    try:
        event.ParseFromString(data)
    except Exception:  # a record whose CRC held but whose bytes are no Event (another tool's file): counted
        c.unknown["unparsable record"] += 1
        return
    kind = event.WhichOneof("what")
    if kind == "summary":
        for value in event.summary.value:
            _value(c, event.step, event.wall_time, value)
    elif kind == "graph_def":
        c.graph = [_node(n) for n in event.graph_def.node]
    elif kind != "version":
        c.unknown[kind or "empty event"] += 1


def _value(c: FolderContent, step: int, wall_time: float, value) -> None:
    tag = value.tag.removesuffix(AUTO)
    kind = value.WhichOneof("value")
    if kind == "scalar_value":
        c.scalars.setdefault(tag, []).append(ScalarPoint(step, wall_time, float(value.scalar_value)))
    elif kind == "image":
        c.add_image(tag, ImagePoint(step, wall_time, bytes(value.image.encoded_image), value.image.height,
                                    value.image.width))
    elif kind == "histogram":
        c.histograms.setdefault(tag, []).append(_histogram(step, wall_time, value.histogram))
    elif kind == "tensor":
        c.tensors.setdefault(tag, []).append(_tensor(step, wall_time, value.tensor))
    else:
        c.unknown[f"{kind or 'empty value'} ({tag})"] += 1


def _histogram(step: int, wall_time: float, h) -> HistogramPoint:
    buckets = list(h.buckets)
    edges = tuple([b.left for b in buckets] + ([buckets[-1].left + buckets[-1].width] if buckets else []))
    return HistogramPoint(step, wall_time, edges, tuple(float(b.count) for b in buckets), float(h.min), float(h.max),
                          float(h.count), float(h.sum))


def _tensor(step: int, wall_time: float, t) -> TensorPoint:
    numbers = [float(x) for x in (*t.float_data, *t.double_data, *t.int32_data, *t.int64_data, *t.uint64_data)]
    finite = [x for x in numbers if math.isfinite(x)]
    dtype = summary_messages().anf__ir__pb2.DataType.Name(t.data_type)
    if not finite:
        return TensorPoint(step, wall_time, tuple(t.dims), dtype, None, None, None)
    return TensorPoint(step, wall_time, tuple(t.dims), dtype, sum(finite) / len(finite), min(finite), max(finite))


def _node(n) -> GraphNode:
    dims = n.output_type.tensor_type.shape.dim if n.output_type.HasField("tensor_type") else None
    return GraphNode(n.name, n.op_type, n.scope, n.full_name or n.name, tuple(i.name for i in n.input),
                     tuple(d.size for d in dims) if dims is not None and len(dims) else None)


def _lineage_event(c: FolderContent, data: bytes) -> None:
    event = lineage_messages().LineageEvent()
    try:
        event.ParseFromString(data)
    except Exception:  # as in _summary_event: counted, not fatal
        c.unknown["unparsable lineage record"] += 1
        return
    kind = event.WhichOneof("what")
    if kind == "train_lineage":
        t = event.train_lineage
        hp = t.hyper_parameters
        c.lineage.update(optimizer=hp.optimizer, learning_rate=hp.learning_rate, loss_function=hp.loss_function,
                         epochs=hp.epoch, batch_size=hp.batch_size, parallel_mode=hp.parallel_mode,
                         device_num=hp.device_num, train_dataset_path=t.train_dataset.train_dataset_path,
                         train_dataset_size=t.train_dataset.train_dataset_size, network=t.algorithm.network,
                         final_loss=t.algorithm.loss, model_path=t.model.path, model_size=t.model.size)
        c.ended = True
    elif kind == "evaluation_lineage":
        e = event.evaluation_lineage
        c.lineage.update({f"eval_{k}": v for k, v in _metrics(e.metric).items()},
                         valid_dataset_path=e.valid_dataset.valid_dataset_path,
                         valid_dataset_size=e.valid_dataset.valid_dataset_size)
    elif kind == "dataset_graph":
        c.lineage["dataset_graph"] = True
    elif kind == "user_defined_info":
        c.lineage.update({k: v for k, v in _user_info(event.user_defined_info).items()})
    else:
        c.unknown[kind or "empty lineage event"] += 1


def _metrics(text: str) -> dict:
    try:
        metrics = json.loads(text) if text else {}
    except ValueError:
        return {"metric": text}
    return metrics if isinstance(metrics, dict) else {"metric": metrics}


def _user_info(info) -> dict:
    out = {}
    for item in info.user_info:
        for map_name in ("map_dict", "map_int32", "map_str", "map_double"):
            field_ = getattr(item, map_name, None)
            if field_ is not None:
                out.update(dict(field_))
    return out
