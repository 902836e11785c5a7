"""One data-parallel rank of a run: started by msrun (core.runs.worker.distributed), never by hand.

    msrun ... core/runs/worker/rank.py RUN_ID --store DIR

msrun runs this file by path (graph mode parses real source files), so it puts the project on sys.path
itself. msrun also runs it once as the scheduler (MS_ROLE=MS_SCHED), which only serves the cluster.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from core.runtime import set_mode  # noqa: E402
from core.runs.worker.entry import open_run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    opened = open_run("One data-parallel rank of a stored run (started by msrun).", argv, store_required=True)
    if opened is None:
        return 2
    store, run, _ = opened
    # deferred: mindspore (and what imports it) only after open_run's prepare_process
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init, release
    set_mode(run.config.mode)
    init()
    if os.environ.get("MS_ROLE") == "MS_SCHED":  # the scheduler: init() returns when the job is over
        return 0
    # deferred: the scheduler above never needs the trainer
    from core.runs.worker.execute import execute_rank
    from core.training.parallel import Parallel
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    parallel = Parallel(rank=get_rank(), size=get_group_size())
    print(f"rank {parallel.rank} of {parallel.size} (pid {os.getpid()}): training run {run.id}", flush=True)
    try:
        status = execute_rank(store, run.id, parallel)
    except Exception as e:
        print(f"rank {parallel.rank} of run {run.id} failed: {e}", file=sys.stderr, flush=True)
        return 1
    print(f"rank {parallel.rank} of run {run.id}: {status}", flush=True)
    release()  # leave the cluster cleanly, so that the scheduler ends now rather than at its time-out
    return 0


if __name__ == "__main__":
    sys.exit(main())
