"""Runs out of the studio, from the command line:

    python -m core.cli.export_run RUN_ID|latest [RUN_ID ...] --format parquet|csv|tensorboard|html|mlflow --out PATH
        [--data-dir MNIST_FOLDER] [--store DIR] [--database-url URL]

parquet, csv: one file per table under the folder PATH (runs, steps, epochs, validations, lr_changes,
layer_stats; several runs stacked, each row with its run's id). tensorboard: one event-file folder per run under
PATH (`tensorboard --logdir PATH`). html: the report file PATH, self-contained (one run, or a comparison of
several); with --data-dir, one run's report adds its confusion matrix and mistakes on that folder's test split.
mlflow (needs `pip install mlflow-skinny`): PATH is a tracking URI (sqlite:///mlflow.db) or a SQLite file.
"""
from __future__ import annotations

import argparse
import sys

from core.app.html_report import evaluation_of
from core.app.run_export import RUN_FORMATS, export_runs
from core.messages import Explained
from core.runs.store.arguments import add_store_arguments, open_store

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Export runs of the run store as Parquet, CSV, TensorBoard event files "
                                             "or a self-contained HTML report.")
    ap.add_argument("runs", nargs="+", metavar="RUN_ID", help="run ids, or 'latest' for the newest run")
    ap.add_argument("--format", required=True, choices=RUN_FORMATS)
    ap.add_argument("--out", required=True, help="a folder (parquet, csv, tensorboard), the report's file (html), or "
                                                 "an MLflow tracking URI or SQLite file (mlflow)")
    ap.add_argument("--data-dir", default=None, help="html: evaluate one run's checkpoint on this MNIST folder")
    add_store_arguments(ap)
    args = ap.parse_args(argv)
    store = open_store(args)
    runs = store.list_runs()
    ids = []
    for asked in args.runs:
        run_id = runs[0].id if asked == "latest" and runs else asked
        if store.get(run_id) is None:
            print(f"error: no run {asked!r} in {store.where} (python -m core.cli.train --help; the Runs page lists "
                  "them)", file=sys.stderr)
            return 2
        ids.append(run_id)
    try:
        evaluation = (evaluation_of(store, ids[0], args.data_dir)
                      if args.format == "html" and args.data_dir and len(ids) == 1 else None)
        written = export_runs(store, ids, args.format, args.out, evaluation)
    except (Explained, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
