"""One data-parallel worker of a run: started by msrun (core.distributed), never by hand.

    msrun ... core/rank.py RUN_ID --store DIR

msrun runs this file by path (graph mode parses real source files), so it puts the project on sys.path
itself. msrun also runs it once as the scheduler (MS_ROLE=MS_SCHED), which only serves the cluster.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.runtime import prepare_process  # noqa: E402
from core.store import RunStore  # noqa: E402


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="One data-parallel worker of a stored run (started by msrun).")
    ap.add_argument("run_id")
    ap.add_argument("--store", required=True)
    args = ap.parse_args(argv)
    store = RunStore(args.store)
    run = store.get(args.run_id)
    if run is None:
        print(f"no run {args.run_id} in {store.db_path}", file=sys.stderr)
        return 2
    prepare_process(run.config.network)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init
    from core.runtime import set_mode
    set_mode(run.config.mode)
    init()
    if os.environ.get("MS_ROLE") == "MS_SCHED":  # the scheduler: init() returns when the job is over
        return 0
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    from core.execute import execute
    from core.trainer import Parallel
    parallel = Parallel(rank=get_rank(), size=get_group_size())
    print(f"rank {parallel.rank} of {parallel.size} (pid {os.getpid()}): training run {args.run_id}", flush=True)
    from mindspore.communication import release
    try:
        status = execute(store, args.run_id, parallel=parallel)
    except Exception as e:
        print(f"rank {parallel.rank} of run {args.run_id} failed: {e}", file=sys.stderr, flush=True)
        return 1
    print(f"rank {parallel.rank} of run {args.run_id}: {status}", flush=True)
    release()  # leave the cluster cleanly, so that the scheduler ends now rather than at its time-out
    return 0


if __name__ == "__main__":
    sys.exit(main())
