"""Runs out of the studio, in the formats other tools read: Parquet or CSV tables, TensorBoard event files, a
self-contained HTML report, an MLflow tracking store (an optional extra). One entry for the command line
(core.cli.export_run) and the pages, which download the result as one file (a .zip of a folder)."""
from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from core.app.html_report import Evaluation, html_report
from core.app.mlflow_runs import write_mlflow
from core.app.run_tables import stacked
from core.app.table_files import write_tables
from core.app.tensorboard_events import write_tensorboard
from core.formats import RUN_FORMATS, RunFormat
from core.runs.store import RunStore

__all__ = ["RunFormat", "RUN_FORMATS", "run_format", "export_runs", "zipped"]



def run_format(value: str) -> RunFormat:
    """A format's name as a RunFormat (ValueError naming the known ones)."""
    for fmt in RUN_FORMATS:
        if value == fmt:
            return fmt
    raise ValueError(f"unknown format {value!r}; choose one of {', '.join(RUN_FORMATS)}")


def export_runs(store: RunStore, run_ids: list[str], fmt: RunFormat, out: str | os.PathLike,
                evaluation: Evaluation | None = None) -> list[Path]:
    """Write the runs in fmt under out (a folder; for html, the report's file); the files or folders written."""
    if fmt == "parquet" or fmt == "csv":
        return write_tables(stacked(store, run_ids), out, fmt)
    if fmt == "tensorboard":
        return write_tensorboard(store, run_ids, out)
    if fmt == "mlflow":  # out: a tracking URI, or a SQLite file's path; what is written is MLflow's runs
        write_mlflow(store, run_ids, out)
        return [Path(str(out))]
    if fmt == "html":
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html_report(store, run_ids, evaluation), encoding="utf-8")
        return [path]
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(RUN_FORMATS)}")  # a caller not type-checked


def zipped(folder: str | os.PathLike) -> bytes:
    """A folder's files as one .zip (paths relative to the folder), for a download button."""
    root, buffer = Path(folder), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            z.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()
