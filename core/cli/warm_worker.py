"""A worker process that trains run after run of one network, so that Start does not wait for Python and MindSpore
to load:

    python -m core.cli.warm_worker NETWORK --store DIR [--run RUN_ID] [--ready-fd FD] [--idle-s S]
    (started by core/runs/launch/warm_pool.py)

It sets the MindSpore environment of NETWORK (the oneDNN cap is per network and fixed at import) and imports
MindSpore and the trainer. Without --run (started ahead by the app server) it builds the model of the settings a
page shows (the default run's until a page sends others on stdin: Inbox) and compiles its first graphs
(core.training.prepared; LeNet-5 with its custom operators, core.kernels), then waits for a run id on stdin,
compiling again for settings sent meanwhile, and prepares again after each run; with --run it trains that run at
once. It trains each
run exactly as core.cli.worker does (its output then goes to the run's log). After a run that ended by itself
(REUSABLE: completed, early-stopped, pruned, diverged) it writes `ready` to --ready-fd and waits for the next run
id, at most --idle-s seconds (0: for ever); it exits after any other end (stopped, failed), after MAX_RUNS runs,
at the end of stdin (the pool let it go, or its server has gone), or when nobody reads --ready-fd.
"""
from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time

from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.runs.launch.dispatcher import TICK_S
from core.runs.launch.warm_pool import PREPARE, log_path
from core.runs.rows import Status
from core.runs.store import RunStore
from core.runs.worker.entry import raise_interrupt
from core.runs.store.arguments import add_store_arguments, open_store
from core.runtime import prepare_process, release_heap
from core.training import graph_cache

READY = "warm worker ready:"  # its log says when it could take a run (bench/start_latency.py waits for it)
QUEUED_WAIT_S = 2 * TICK_S  # after a run, how long a worker started ahead waits for a queued run, before compiling
COMPILED_AHEAD = "warm worker: compiled ahead for"  # its log, once a model's graphs are compiled before its run
MAX_RUNS = 50  # then a fresh process: nothing a long life gathers (caches, fragments) builds up
# Runs that ended by the training loop's own return: the process is as sound as before. A stopped run may have
# been signalled, a failed one left anything behind: its worker ends.
_GRAPHS = {"loaded": "its graphs loaded from the graph cache", "saved": "its graphs kept in the graph cache",
           "compiled": "compiled"}  # how prepare's graphs came (core.training.graph_cache), said in the log
REUSABLE = (Status.COMPLETED, Status.EARLY_STOPPED, Status.PRUNED, Status.DIVERGED)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Wait, warmed up, for runs of NETWORK; train each.")
    ap.add_argument("network")
    add_store_arguments(ap, required=True)
    ap.add_argument("--run", default=None, help="train this run at once (a worker started for it)")
    ap.add_argument("--ready-fd", type=int, default=None,
                    help="say `ready` here after each run that ended by itself, and wait for another (else exit "
                         "after one run)")
    ap.add_argument("--idle-s", type=float, default=0.0, help="wait at most this long for the next run (0: for ever)")
    args = ap.parse_args(argv)
    began = time.monotonic()
    prepare_process(args.network)
    graph_cache.allow()
    signal.signal(signal.SIGTERM, raise_interrupt)
    from core.runs.worker.execute import execute  # deferred: warming up is loading MindSpore and the trainer now
    inbox = Inbox(args.network)
    if args.run is None:
        inbox.take_waiting()  # the settings a page showed already (the pool sends them as it starts a worker)
        _prepare_model(inbox.wanted)
    print(f"{READY} {args.network} in {time.monotonic() - began:.1f} s (pid {os.getpid()})", flush=True)
    run_id = args.run or inbox.next_run(None)
    store = open_store(args) if run_id else None
    if store is not None:
        store.ride_out_outages()  # a database restart pauses the run instead of ending it
    served = 0
    while run_id and store is not None:
        status = _train(store, run_id, args.network, execute)
        served += 1
        if status not in REUSABLE or args.ready_fd is None or served >= MAX_RUNS:
            return 0 if status is not None else 1
        _output_to(log_path(store, args.network))
        release_heap()  # what the run froze and left behind is collected before the next (core.runtime.settle_heap)
        print(f"{READY} {args.network} again (runs trained: {served}; pid {os.getpid()})", flush=True)
        if not _say_ready(args.ready_fd):
            return 0
        run_id = ""
        if args.run is None:  # started ahead for Start: the next run with the page's settings finds its graphs
            # compiled again; but a run queued behind this one comes at the dispatcher's next tick, and trains at
            # once on a model built for it rather than wait for that compilation (~4 s here; a run handed over
            # while it compiles waits in stdin)
            run_id = inbox.next_run(QUEUED_WAIT_S)
            if not run_id:
                _prepare_model(inbox.wanted)
        run_id = run_id or inbox.next_run(args.idle_s or None)
    return 0


def _train(store: RunStore, run_id: str, network: str, execute) -> str | None:
    """Train the run with this process's output in its log; its final status (None: it could not be trained)."""
    _output_to(store.log_path(run_id))
    run = store.get(run_id)
    if run is None or run.config.network != network:
        print(f"run {run_id}: not a {network} run of {store.where}", file=sys.stderr, flush=True)
        return None
    try:
        status = execute(store, run_id)
    except Exception as e:
        print(f"run {run_id} failed: {e}", file=sys.stderr, flush=True)
        return None
    print(f"run {run_id}: {status}", flush=True)
    return status


class Inbox:
    """This worker's stdin: run ids to train, one a line, and `prepare <TrainConfig JSON>` lines, the settings a
    page shows for this network (core/runs/launch/warm_pool.py, `want`): while it waits, the worker compiles the
    latest of them ahead, so that Start with those settings finds its graphs compiled."""

    def __init__(self, network: str):
        self.wanted = TrainConfig(network=network)
        self._network, self._buffer = network, b""

    def next_run(self, timeout_s: float | None) -> str:
        """The next run id ('' at the end of stdin, or when timeout_s passed without one); settings sent
        meanwhile are prepared, the latest only, whenever no other line waits."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            line = self._line(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if line is None:
                return ""
            if not line.startswith(PREPARE):
                return line
            self._want(line)
            if not self._line_waiting():
                _prepare_model(self.wanted)

    def take_waiting(self) -> None:
        """Take the settings lines already sent (at the start), up to the first run id, which stays for next_run."""
        while self._line_waiting() and self._buffer.startswith(PREPARE.encode()):
            line = self._line(0.0)
            if line is not None:
                self._want(line)

    def _want(self, line: str) -> None:
        try:
            config = TrainConfig.from_json(line[len(PREPARE):])
        except (ValueError, TypeError) as e:  # ConfigError is a ValueError: the pool sent what it should not
            print(f"warm worker: ignored settings that are not a config ({e})", file=sys.stderr, flush=True)
            return
        if config.network == self._network:
            self.wanted = config

    def _line_waiting(self) -> bool:
        """Whether a whole line can be read now, without waiting."""
        return self._fill(0.0)

    def _line(self, timeout_s: float | None) -> str | None:
        """The next line of stdin (None at its end, or when timeout_s passed without a whole one)."""
        if not self._fill(timeout_s):
            return None
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode().strip()

    def _fill(self, timeout_s: float | None) -> bool:
        """Read stdin until a whole line is buffered (False at its end, or when timeout_s passed first)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([0], [], [], wait)[0]:
                return False
            chunk = os.read(0, 65536)
            if not chunk:
                return False
            self._buffer += chunk
        return True


def _say_ready(fd: int) -> bool:
    try:
        os.write(fd, b"ready\n")
        return True
    except OSError:  # the pool's process has gone: nobody will hand this worker a run
        return False


def _prepare_model(config: TrainConfig) -> None:
    """config's model built and its first graphs compiled now, not after Start (a run takes it when its graphs are
    the same: core.training.prepared); LeNet-5's custom operators built and loaded with it. Nothing is compiled
    again for the same graphs, nor for settings a warm worker does not train (core.training.prepared.preparable).
    The first model's graphs come from the graph cache when a process of the same graphs kept them there
    (core.training.graph_cache)."""
    from core.training.build import prepare_data  # deferred: MindSpore, after prepare_process
    from core.training import prepared  # deferred: MindSpore
    if not prepared.preparable(config):
        return
    try:
        data = prepare_data(config, validate_mnist_dir(config.data_dir), None, seed=config.seed)
        if prepared.prepared_settings(config.network) == (prepared.graph_settings(config), data.steps_per_epoch):
            return  # still there: the last run built its own, or these settings compile the same graphs
        prepared.discard(config.network)
        began = time.monotonic()
        how = prepared.prepare(config, data.steps_per_epoch)
        print(f"{COMPILED_AHEAD} {config.shape_label}, batch {config.batch_size} "
              f"({time.monotonic() - began:.1f} s; {_GRAPHS[how]})", flush=True)
    except Exception as e:  # the run still trains, on a model built when it starts (as without a warm worker)
        print(f"warm worker: the {config.shape_label} model could not be prepared ({e}); runs build their own",
              file=sys.stderr, flush=True)


def _output_to(path) -> None:
    """From now on this process's stdout and stderr (MindSpore's too) go to the file at path (appended)."""
    sys.stdout.flush()
    sys.stderr.flush()
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(target, 1)
    os.dup2(target, 2)
    os.close(target)


if __name__ == "__main__":
    sys.exit(main())
