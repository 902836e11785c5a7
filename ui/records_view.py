"""Runs and Compare pages: a run's records, or several runs', out of the studio as files other tools read —
CSV or Parquet tables, TensorBoard event files, a self-contained HTML report (core/app/run_export.py)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from core.app.html_report import Evaluation, evaluation_of
from core.app.run_export import RunFormat, export_runs, zipped
from core.app.tensorboard_events import run_folder_name
from core.data.idx import DataError
from core.runs.rows import Run
from core.runs.store import RunStore
from ui.identity import actions, attempt, current_person
from ui.language import say, t
from ui.prepared_download import FileMade, prepared_download

__all__ = ["RECORD_FORMATS", "records_download", "may_take_out", "record_take_out"]

RECORD_FORMATS: tuple[RunFormat, ...] = ("html", "csv", "parquet", "tensorboard")


def may_take_out(runs: list[Run]) -> bool:
    """Whether this person may take these runs out of the studio (each run's owner, or an admin); said in a line
    where not (a viewer, another person's run)."""
    if all(current_person().may("export", r) for r in runs):
        return True
    st.caption("🔒 " + t("records.owner_only"))
    return False


def record_take_out(runs: list[Run], what: str) -> None:
    """A download button's callback: the history's line for what was taken out."""
    for run in runs:
        actions().did("export", run, detail=what)


def records_download(store: RunStore, runs: list[Run], key: str) -> None:
    """Choose a format, prepare the file (it is made when asked: a report embeds plotly.js), download it."""
    if not may_take_out(runs):
        return
    fmt = st.radio(t("records.format"), RECORD_FORMATS, horizontal=True, key=f"{key}_format",
                   format_func=lambda f: t(f"records.format_{f}"))
    st.caption(t(f"records.holds_{fmt}"))
    wanted = (tuple(r.id for r in runs), fmt, tuple(r.step for r in runs), tuple(str(r.status) for r in runs))
    prepared_download(key, wanted, lambda: _prepare(store, runs, fmt), t("records.prepare"),
                      allowed=lambda: attempt(actions().export_records, runs, fmt))


def _prepare(store: RunStore, runs: list[Run], fmt: RunFormat) -> FileMade:
    """The file: one HTML report, or a zip of tables or event files."""
    ids = [r.id for r in runs]
    stem = run_folder_name(runs[0].name, runs[0].id) if len(runs) == 1 else f"comparison-of-{len(runs)}-runs"
    with tempfile.TemporaryDirectory() as tmp:
        if fmt == "html":
            out = Path(tmp) / "report.html"
            export_runs(store, ids, fmt, out, _evaluation(store, runs))
            return FileMade(out.read_bytes(), f"{stem}-report.html", "text/html")
        export_runs(store, ids, fmt, tmp)
        return FileMade(zipped(tmp), f"{stem}-{fmt}.zip", "application/zip")


def _evaluation(store: RunStore, runs: list[Run]) -> Evaluation | None:
    """One studio run's checkpoint on its own data folder (its test split, else its validation split); said
    and left out of the report when that folder cannot be read here."""
    run = runs[0]
    if len(runs) != 1 or not run.checkpoint or run.external:
        return None
    try:
        return evaluation_of(store, run.id, run.config.data_dir)
    except DataError as e:
        st.caption(t("records.no_evaluation", error=say(e)))
        return None
