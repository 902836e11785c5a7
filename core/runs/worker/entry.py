"""The start of a process that trains a stored run (the worker process, an msrun rank): which run, and the
process settings for its network before mindspore is imported."""
from __future__ import annotations

import argparse
import signal
import sys

from core.runs.rows import Run
from core.runs.store import RunStore
from core.runs.store.arguments import add_store_arguments, open_store
from core.runtime import prepare_process

__all__ = ["open_run", "raise_interrupt"]


def raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def open_run(description: str, argv: list[str] | None,
             store_required: bool = False) -> tuple[RunStore, Run, str | None] | None:
    """Parse `RUN_ID [--store DIR]`, prepare this process for the run's network (before mindspore is
    imported) and make SIGTERM end it as stopped rather than leave it 'running'. Returns (store, run, the data
    folder given with --data-dir), or None after saying why (no such run)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("run_id")
    add_store_arguments(ap, required=store_required)
    ap.add_argument("--data-dir", default=None, help="this host's copy of the run's data (a Dask worker's)")
    args = ap.parse_args(argv)
    store = open_store(args)
    store.ride_out_outages()  # a database restart pauses the run instead of ending it
    run = store.get(args.run_id)
    if run is None:
        print(f"no run {args.run_id} in {store.where}", file=sys.stderr)
        return None
    prepare_process(run.config.network)
    signal.signal(signal.SIGTERM, raise_interrupt)
    return store, run, args.data_dir
