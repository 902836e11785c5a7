"""Training worker process: python -m core.worker <run-id> [--store DIR]

Started by the dashboard with subprocess (not multiprocessing, which would re-import the Streamlit page).
It picks its MindSpore environment for the run's network before importing mindspore.
"""
from __future__ import annotations

import argparse
import signal
import sys

from core.runtime import prepare_process
from core.store import RunStore


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Train one run of the run store.")
    ap.add_argument("run_id")
    ap.add_argument("--store", default=None, help="run store folder (default: $STUDIO_DATA_DIR or ./runs)")
    args = ap.parse_args(argv)
    store = RunStore(args.store)
    run = store.get(args.run_id)
    if run is None:
        print(f"no run {args.run_id} in {store.db_path}", file=sys.stderr)
        return 2
    prepare_process(run.config.network)
    # SIGTERM (a forced Stop) ends the run as stopped rather than leaving it 'running'.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    from core.execute import execute
    try:
        status = execute(store, args.run_id)
    except Exception as e:
        print(f"run {args.run_id} failed: {e}", file=sys.stderr)
        return 1
    print(f"run {args.run_id}: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
