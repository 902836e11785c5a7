"""A run's tables as files: one Parquet or CSV file per table (runs, steps, epochs, validations, lr_changes,
layer_stats), the runs stacked in each. Parquet keeps the histogram columns as lists; CSV writes them as JSON."""
from __future__ import annotations

import json
import os
from pathlib import Path

from core.app.run_tables import RunTables

__all__ = ["TABLE_FORMATS", "write_tables"]

TABLE_FORMATS = ("parquet", "csv")


def write_tables(tables: RunTables, out_dir: str | os.PathLike, fmt: str) -> list[Path]:
    """Write <out_dir>/<table>.<fmt> for every table; the files written."""
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(TABLE_FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.named().items():
        path = out / f"{name}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            lists = [c for c in ("hist_edges", "hist_counts") if c in frame]
            frame.assign(**{c: frame[c].map(json.dumps) for c in lists}).to_csv(path, index=False)
        written.append(path)
    return written
