"""Summary folders for the import tests: one the example script writes, and a copy of one cut half-way, as a
training still writing it leaves it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core import PROJECT_ROOT
from core.summaries.records import frame, scan_records

__all__ = ["collect", "half_written"]


def collect(train_dir: Path, folder: Path, steps: int = 10, epochs: int = 2) -> subprocess.CompletedProcess:
    """examples/lenet5_summary_collector.py writing `folder` (LeNet-5, Model.train, SummaryCollector)."""
    out = subprocess.run([sys.executable, "examples/lenet5_summary_collector.py", "--data", str(train_dir),
                          "--summary-dir", str(folder), "--steps", str(steps), "--epochs", str(epochs)],
                         cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out


def half_written(source: Path, folder: Path) -> tuple[Path, Path]:
    """`folder` holding the first half of the records of source's summary file and no lineage: (the whole summary
    file, the lineage file) of source, to write in later."""
    (events,) = source.glob("*_MS")
    (lineage,) = source.glob("*_lineage")
    records = scan_records(events).records
    folder.mkdir(parents=True)
    (folder / events.name).write_bytes(b"".join(frame(r) for r in records[:len(records) // 2]))
    return events, lineage
