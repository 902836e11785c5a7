"""Runs out of the studio, from the command line:

    python -m core.cli.export_run RUN_ID|latest [RUN_ID ...] --format parquet|csv|tensorboard|html|mlflow --out PATH
        [--force] [--data-dir MNIST_FOLDER] [--store DIR] [--database-url URL]

As on the pages: only each run's owner (the OS user that queued it) or an admin may export it, and each export is
a line of the store's history. An existing --out is not overwritten without --force.

parquet, csv: one file per table under the folder PATH (runs, steps, epochs, validations, setting_changes,
layer_stats; several runs stacked, each row with its run's id). tensorboard: one event-file folder per run under
PATH (`tensorboard --logdir PATH`). html: the report file PATH, self-contained (one run, or a comparison of
several); with --data-dir, one run's report adds its confusion matrix and mistakes on that folder's test split.
mlflow (needs `pip install mlflow-skinny`): PATH is a tracking URI (sqlite:///mlflow.db) or a SQLite file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.app.html_report import evaluation_of
from core.app.run_export import RUN_FORMATS, export_runs, run_format
from core.cli.control import REFUSED
from core.messages import Explained
from core.runs.people.actions import Actions
from core.runs.people.permissions import NotAllowed, command_line_person
from core.runs.store.arguments import add_store_arguments, open_store

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Export runs of the run store as Parquet, CSV, TensorBoard event files "
                                             "or a self-contained HTML report.")
    ap.add_argument("runs", nargs="+", metavar="RUN_ID", help="run ids, or 'latest' for the newest run")
    ap.add_argument("--format", required=True, choices=RUN_FORMATS)  # argparse names the choices when refused
    ap.add_argument("--out", required=True, help="a folder (parquet, csv, tensorboard), the report's file (html), or "
                                                 "an MLflow tracking URI or SQLite file (mlflow)")
    ap.add_argument("--force", action="store_true", help="overwrite what --out names when it exists")
    ap.add_argument("--data-dir", default=None, help="html: evaluate one run's checkpoint on this MNIST folder")
    add_store_arguments(ap)
    args = ap.parse_args(argv)
    fmt = run_format(args.format)
    store = open_store(args)
    runs = store.list_runs()
    ids, chosen = [], []
    for asked in args.runs:
        run_id = runs[0].id if asked == "latest" and runs else asked
        run = store.get(run_id)
        if run is None:
            print(f"error: no run {asked!r} in {store.where} (python -m core.cli.train --help; the Runs page lists "
                  "them)", file=sys.stderr)
            return 2
        ids.append(run_id)
        chosen.append(run)
    if fmt != "mlflow" and _would_overwrite(args.out, fmt) and not args.force:
        print(f"error: {args.out} exists and holds files this export would replace: choose another --out, or add "
              "--force to overwrite them", file=sys.stderr)
        return 2
    try:
        Actions(store, command_line_person(store)).export_records(chosen, fmt)
    except NotAllowed as e:
        print(f"refused: {e}", file=sys.stderr)
        return REFUSED
    try:
        evaluation = (evaluation_of(store, ids[0], args.data_dir)
                      if fmt == "html" and args.data_dir and len(ids) == 1 else None)
        written = export_runs(store, ids, fmt, args.out, evaluation)
    except (Explained, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


def _would_overwrite(out: str, fmt: str) -> bool:
    """A report's file that exists, or a folder that already holds what the export writes."""
    path = Path(out)
    if fmt == "html":
        return path.exists()
    return path.is_file() or (path.is_dir() and any(path.iterdir()))


if __name__ == "__main__":
    sys.exit(main())
