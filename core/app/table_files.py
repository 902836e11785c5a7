"""A run's tables as files: one Parquet or CSV file per table (runs, steps, epochs, validations, setting_changes,
layer_stats), the runs stacked in each. Parquet keeps the histogram columns as lists; CSV writes them as JSON.
A CSV's text cells that a spreadsheet would read as a formula (=, +, -, @, a tab or a carriage return first: a
run named `=HYPERLINK(…)`) are written with a leading apostrophe, as OWASP's CSV-injection guidance says."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from core.app.run_tables import RunTables
from core.formats import TABLE_FORMATS, TableFormat

__all__ = ["TableFormat", "TABLE_FORMATS", "write_tables", "formula_safe"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell that starts like a formula prefixed with an apostrophe (numbers, even
    negative ones, stay numbers)."""
    text = [c for c in frame.columns if frame[c].dtype == object]
    defuse = lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_STARTS) else v  # noqa: E731
    return frame.assign(**{c: frame[c].map(defuse) for c in text}) if text else frame


def write_tables(tables: RunTables, out_dir: str | os.PathLike, fmt: TableFormat) -> list[Path]:
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
            formula_safe(frame.assign(**{c: frame[c].map(json.dumps) for c in lists})).to_csv(path, index=False)
        written.append(path)
    return written
