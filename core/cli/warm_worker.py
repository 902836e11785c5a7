"""A worker process started before it is needed, so that Start does not wait for Python and MindSpore to load:

    python -m core.cli.warm_worker NETWORK --store DIR       (started by the app server: core/runs/launch/warm_pool.py)

It sets the MindSpore environment of NETWORK (the oneDNN cap is per network and fixed at import), imports
MindSpore and the trainer, builds the default run's model and compiles its first graphs (core.training.prepared;
LeNet-5 with its custom operators, core.kernels), then waits for one run id on stdin and trains that run
exactly as core.cli.worker does (its output then goes to the run's log). One run per process: the next is another
fresh process. At the end of stdin without a run id (the app server has gone) it exits.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.runs.worker.entry import raise_interrupt
from core.runs.store.arguments import add_store_arguments, open_store
from core.runtime import prepare_process

READY = "warm worker ready:"  # its log says when it could take a run (bench/start_latency.py waits for it)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Wait, warmed up, for a run of NETWORK; then train it.")
    ap.add_argument("network")
    add_store_arguments(ap, required=True)
    args = ap.parse_args(argv)
    began = time.monotonic()
    prepare_process(args.network)
    signal.signal(signal.SIGTERM, raise_interrupt)
    from core.runs.worker.execute import execute  # deferred: warming up is loading MindSpore and the trainer now
    _prepare_default_model(args.network)
    print(f"{READY} {args.network} in {time.monotonic() - began:.1f} s (pid {os.getpid()})", flush=True)
    run_id = sys.stdin.readline().strip()
    if not run_id:
        return 0  # nobody needs this process any more
    store = open_store(args)
    store.ride_out_outages()  # a database restart pauses the run instead of ending it
    _output_to(store.log_path(run_id))
    run = store.get(run_id)
    if run is None or run.config.network != args.network:
        print(f"run {run_id}: not a {args.network} run of {store.where}", file=sys.stderr)
        return 2
    try:
        status = execute(store, run_id)
    except Exception as e:
        print(f"run {run_id} failed: {e}", file=sys.stderr)
        return 1
    print(f"run {run_id}: {status}")
    return 0


def _prepare_default_model(network: str) -> None:
    """The default run's model built and its first graphs compiled now, not after Start (the run takes it when
    its graphs are the same: core.training.prepared); LeNet-5's custom operators built and loaded with it."""
    from core.training.build import prepare_data  # deferred: MindSpore, after prepare_process
    from core.training.prepared import prepare  # deferred: MindSpore
    config = TrainConfig(network=network)
    try:
        data = prepare_data(config, validate_mnist_dir(config.data_dir), None, seed=config.seed)
        prepare(config, data.steps_per_epoch)
    except Exception as e:  # the run still trains, on a model built when it starts (as without a warm worker)
        print(f"warm worker: the default {network} model could not be prepared ({e}); runs build their own",
              file=sys.stderr, flush=True)


def _output_to(path) -> None:
    """From now on this process's stdout and stderr (MindSpore's too) go to the run's log."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
