"""The worker process of one run: python -m core.cli.worker <run-id> [--store DIR] [--database-url URL] [--data-dir DIR]

Started by the dashboard with subprocess (not multiprocessing, which would re-import the Streamlit page).
It picks its MindSpore environment for the run's network before importing mindspore.
"""
from __future__ import annotations

import sys

from core.runs.worker.entry import open_run
from core.training import graph_cache


def main(argv: list[str] | None = None) -> int:
    opened = open_run("Train one run of the run store.", argv)
    if opened is None:
        return 2
    store, run, data_dir = opened
    from core.runs.worker.execute import execute  # deferred: imports mindspore, after open_run's prepare_process
    graph_cache.allow()  # a training process: its run's first graphs may come from the graph cache
    try:
        status = execute(store, run.id, data_dir=data_dir)
    except Exception as e:
        print(f"run {run.id} failed: {e}", file=sys.stderr)
        return 1
    print(f"run {run.id}: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
