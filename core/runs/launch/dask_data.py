"""The runs' MNIST files on a Dask cluster: each folder scattered once and kept for the next runs.

A sweep's trials share one folder, so its files travel to the cluster once, not once a trial. Each scatter has
a key of its own (`hash=False`) and stays referenced while the executor lives (the KEPT most recently used
folders): Dask forgets a content-hashed key that is scattered again just after its last future was released,
and cancels the task that needed it (dask/distributed#8576) — that lost a sweep's third trial, whose data was
scattered as the first two trials' runs ended."""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from core.data.folders import SPLIT_FILES, validate_mnist_dir

__all__ = ["KEPT", "ScatteredData"]

KEPT = 2  # folders kept on the cluster (full MNIST: ~55 MB each)


def _files(data_dir: str | None) -> dict[str, Path]:
    folder = validate_mnist_dir(data_dir)
    return {f"{split}/{name}": folder.split_dir(split) / name
            for split in (("train", "test") if folder.has_test else ("train",)) for name in SPLIT_FILES[split]}


class ScatteredData:
    """The scattered files of the folders runs used last, by folder and the files' sizes and times (a folder
    whose files were replaced is sent again)."""

    def __init__(self):
        self._kept: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def future(self, client, data_dir: str | None):
        """The future of the folder's files on the cluster, scattered now unless a run sent them already."""
        files = _files(data_dir)
        stats = {rel: path.stat() for rel, path in files.items()}
        signature = tuple((rel, str(files[rel].resolve()), st.st_size, st.st_mtime_ns) for rel, st in stats.items())
        with self._lock:
            kept = self._kept.get(signature)
            if kept is not None and kept.status == "finished":  # in the cluster's memory (not lost with a restart)
                self._kept.move_to_end(signature)
                return kept
            future = client.scatter([{rel: path.read_bytes() for rel, path in files.items()}], hash=False)[0]
            self._kept[signature] = future
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)  # a run still training on it holds its own reference
            return future

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
