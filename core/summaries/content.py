"""What a training folder holds, typed: scalars, images, histograms, tensors, the graph and the lineage, each by
tag and step, plus what could not be read. Both readers (MindSpore summaries, TensorBoard event files) fill it."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.summaries.records import Skip, scan_records

__all__ = ["ScalarPoint", "ImagePoint", "HistogramPoint", "TensorPoint", "GraphNode", "FileSkip", "FolderContent",
           "KEEP_IMAGES"]

KEEP_IMAGES = 8  # images kept a tag (the last ones): one a step of 10,000 steps would hold 600 MB


@dataclass(frozen=True)
class ScalarPoint:
    step: int
    wall_time: float
    value: float


@dataclass(frozen=True)
class ImagePoint:
    step: int
    wall_time: float
    png: bytes
    height: int
    width: int


@dataclass(frozen=True)
class HistogramPoint:
    """A histogram as recorded: bucket edges (one more than the counts) and counts, with its min, max and count
    (NaN and infinities counted apart, as MindSpore records them)."""
    step: int
    wall_time: float
    edges: tuple[float, ...]
    counts: tuple[float, ...]
    min: float
    max: float
    count: float
    sum: float


@dataclass(frozen=True)
class TensorPoint:
    step: int
    wall_time: float
    shape: tuple[int, ...]
    dtype: str
    mean: float | None  # of its finite values (None: no numbers, e.g. a string tensor)
    min: float | None
    max: float | None


@dataclass(frozen=True)
class GraphNode:
    """An operator of the graph: its scope (slash-separated, as MindInsight grouped them), type, inputs and
    output shape."""
    name: str
    op_type: str
    scope: str
    full_name: str
    inputs: tuple[str, ...]
    shape: tuple[int, ...] | None


@dataclass(frozen=True)
class FileSkip:
    """What a file lost: its name (relative to the folder), and where and why."""
    file: str
    skip: Skip


@dataclass
class FolderContent:
    """One training folder's records, as far as they have been read (a watched folder grows)."""
    folder: Path
    scalars: dict[str, list[ScalarPoint]] = field(default_factory=dict)
    images: dict[str, list[ImagePoint]] = field(default_factory=dict)
    image_counts: Counter = field(default_factory=Counter)
    histograms: dict[str, list[HistogramPoint]] = field(default_factory=dict)
    tensors: dict[str, list[TensorPoint]] = field(default_factory=dict)
    graph: list[GraphNode] = field(default_factory=list)
    lineage: dict[str, Any] = field(default_factory=dict)  # hyperparameters, dataset, network, metrics
    ended: bool = False  # the training lineage, written when Model.train returns, was read
    skipped: list[FileSkip] = field(default_factory=list)
    unknown: Counter = field(default_factory=Counter)  # kinds of record read but not understood, by name
    records: int = 0

    def new_records(self, offsets: dict[str, int], matches: Callable[[Path], bool],
                    final: bool) -> Iterator[tuple[Path, bytes]]:
        """The sound records of the folder's files that `matches` takes, from where `offsets` says each was read up
        to (updated as they are read); what could not be read is added to `skipped`, each record counted."""
        for path in sorted(p for p in self.folder.iterdir() if p.is_file() and matches(p)):
            start = offsets.get(path.name, 0)
            if path.stat().st_size <= start:
                continue
            scan = scan_records(path, start, final)
            offsets[path.name] = scan.end
            self.skipped += [FileSkip(path.name, s) for s in scan.skipped]
            for data in scan.records:
                self.records += 1
                yield path, data

    def add_image(self, tag: str, point: ImagePoint) -> None:
        kept = self.images.setdefault(tag, [])
        kept.append(point)
        del kept[:-KEEP_IMAGES]
        self.image_counts[tag] += 1

    @property
    def steps(self) -> int:
        """The last step any record names."""
        lasts = [points[-1].step for points in self.scalars.values() if points]
        lasts += [points[-1].step for points in self.histograms.values() if points]
        lasts += [points[-1].step for points in self.tensors.values() if points]
        return max(lasts, default=0)
