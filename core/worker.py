"""The worker process of one run: python -m core.worker <run-id> [--store DIR]

Started by the dashboard with subprocess (not multiprocessing, which would re-import the Streamlit page).
It picks its MindSpore environment for the run's network before importing mindspore.
"""
from __future__ import annotations

import argparse
import signal
import sys

from core.runtime import prepare_process
from core.runs.store import RunStore


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def open_run(description: str, argv: list[str] | None, store_required: bool = False):
    """Parse `RUN_ID [--store DIR]`, prepare this process for the run's network (before mindspore is
    imported) and make SIGTERM end it as stopped rather than leave it 'running'. Returns (store, run),
    or None after saying why (no such run)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("run_id")
    ap.add_argument("--store", default=None, required=store_required,
                    help="run store folder (default: $STUDIO_DATA_DIR or ./runs)")
    args = ap.parse_args(argv)
    store = RunStore(args.store)
    run = store.get(args.run_id)
    if run is None:
        print(f"no run {args.run_id} in {store.db_path}", file=sys.stderr)
        return None
    prepare_process(run.config.network)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    return store, run


def main(argv: list[str] | None = None) -> int:
    opened = open_run("Train one run of the run store.", argv)
    if opened is None:
        return 2
    store, run = opened
    from core.runs.execute import execute  # deferred: imports mindspore, after open_run's prepare_process
    try:
        status = execute(store, run.id)
    except Exception as e:
        print(f"run {run.id} failed: {e}", file=sys.stderr)
        return 1
    print(f"run {run.id}: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
