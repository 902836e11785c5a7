"""Training folders under a root: those that hold MindSpore summary files or TensorBoard event files, and the
reader for each (as MindInsight's summary base folder and TensorBoard's logdir list their runs)."""
from __future__ import annotations

from pathlib import Path

from core.summaries.mindspore_summary import FolderReader, is_summary_file
from core.summaries.tensorboard_logs import TensorBoardReader, is_event_file

__all__ = ["training_folders", "reader_for"]


def training_folders(root: Path, most: int = 10_000) -> list[Path]:
    """Every folder under root (root included) holding summary or event files, sorted; at most `most`."""
    found = {p.parent for p in root.rglob("*") if (is_summary_file(p) or is_event_file(p)) and p.is_file()}
    return sorted(found)[:most]


def reader_for(folder: Path) -> FolderReader | TensorBoardReader:
    """MindSpore's reader where the folder holds its summary files, else TensorBoard's."""
    if any(is_summary_file(p) for p in folder.iterdir()):
        return FolderReader(folder)
    return TensorBoardReader(folder)
