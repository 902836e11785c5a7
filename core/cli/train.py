"""Command-line trainer: python -m core.cli.train [options]

Every run is recorded in the run store (so it shows live in the dashboard) and checkpointed there;
--out also copies the final checkpoint to a path of your choice.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

from tqdm import tqdm

from core.config import ConfigError, TrainConfig
from core.i18n import counted
from core.options import add_config_arguments, config_from_args
from core.presets import PRESETS
from core.data.folders import validate_mnist_dir
from core.data.idx import DataError
from core.messages import ExplainedValueError
from core.runs.people.permissions import os_user
from core.runs.worker.cluster import ClusterSpec
from core.runs.launch import launcher
from core.runs.launch.dispatcher import TICK_S
from core.runs.run_queue import RunQueue
from core.runs.rows import FINISHED, QUEUED
from core.runs.store import RunBusy, RunStore
from core.runs.worker.start_weights import checkpoint_for
from core.runs.store.arguments import add_store_arguments, open_store
from core.runtime import prepare_process
from core.training import graph_cache
from core.training.clock import about
from core.training.events import (Callback, EpochMetrics, SettingEvent, LogEvent, PhaseEvent, StepEvent,
                                  ValidationEvent)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="Train one of the studio's networks (core/networks/) on MNIST.")
    add_config_arguments(ap)
    ap.add_argument("--preset", default=None, choices=sorted(PRESETS),
                    help="start from named settings (the options given override them): best-5k = LeNet-5 to "
                         "~99%% on the official test set from the bundled 5,000 images in under a minute")
    ap.add_argument("--name", default=None, help="a name for the run in the dashboard")
    ap.add_argument("--no-wait", action="store_true",
                    help="queue the run and return; a dispatcher (the app server, or a waiting command line) "
                         "starts it in a worker process when a slot frees (slots: $STUDIO_SLOTS, default 1)")
    add_store_arguments(ap)
    ap.add_argument("--out", default=None, help="also copy the final checkpoint here (.ckpt)")
    dist = ap.add_argument_group("several hosts (data-parallel with --workers N; see docs/command-line.md)")
    dist.add_argument("--local-workers", type=int, default=None, metavar="N",
                      help="workers to start on this host (default: all of --workers)")
    dist.add_argument("--master-addr", default="127.0.0.1", metavar="HOST",
                      help="the scheduler's address: host 0's (default 127.0.0.1)")
    dist.add_argument("--master-port", type=int, default=None, metavar="PORT",
                      help="the scheduler's port (default: a free one; required with several hosts)")
    dist.add_argument("--node-rank", type=int, default=0, metavar="K",
                      help="this host's number: 0 runs the scheduler and records the run (default 0)")
    dist.add_argument("--cluster-timeout", type=int, default=60, metavar="S",
                      help="seconds workers wait for each other, at start and when one is lost (default 60)")
    ap.add_argument("--resume", default=None, metavar="RUN_ID",
                    help="continue a stopped, failed or interrupted run from its last checkpoint "
                         "(its own config is used; other options are ignored)")
    return ap


class ProgressBar(Callback):
    """A tqdm bar over the run's steps on stderr (loss, samples/s and the trainer's ETA, which leaves out
    graph compilation); epoch summaries and log lines on stdout. A display must never stop training."""

    critical = False

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.bar: tqdm | None = None

    def on_phase(self, e: PhaseEvent) -> None:
        if e.phase == "compiling":
            tqdm.write("compiling the graph...", file=sys.stdout)

    def on_step(self, e: StepEvent) -> None:
        if self.bar is None:
            self.bar = tqdm(total=e.total_steps, initial=e.step - 1, unit="step", file=self.stream, mininterval=0.2,
                            dynamic_ncols=True, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt}{postfix}")
        self.bar.set_postfix_str(f"epoch {e.epoch} loss {e.loss:.4f} {e.samples_per_s:.0f} samples/s "
                                 f"ETA {about(e.eta)}", refresh=False)
        self.bar.update(e.step - self.bar.n)

    def on_epoch(self, e: EpochMetrics) -> None:
        val = "" if e.val_acc is None else f"  val_loss {e.val_loss:.4f}  val_acc {e.val_acc:.4f}"
        tqdm.write(f"epoch {e.epoch:>3}  train_loss {e.train_loss:.4f}  train_acc {e.train_acc:.4f}{val}  "
                   f"{e.epoch_seconds:.1f}s", file=sys.stdout)

    def on_validation(self, e: ValidationEvent) -> None:
        tqdm.write(f"step {e.step:>5}  val_loss {e.val_loss:.4f}  val_acc {e.val_acc:.4f}", file=sys.stdout)

    def on_setting(self, e: SettingEvent) -> None:
        tqdm.write(f"{e.setting.replace('_', ' ')} {e.value:g} from step {e.step}", file=sys.stdout)

    def on_log(self, e: LogEvent) -> None:
        tqdm.write(e.message, file=sys.stdout)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.resume:
        return _resume(args)
    try:
        config = config_from_args(args)
    except ConfigError as e:
        for k, msg in e.errors.items():
            print(f"error: --{k.replace('_', '-')}: {msg}", file=sys.stderr)
        return 2
    cluster = cluster_from_args(args)
    problems = cluster.errors(config.workers) if config.workers > 1 else {}
    for k, msg in problems.items():
        print(f"error: --{k.replace('_', '-')}: {msg}", file=sys.stderr)
    if problems:
        return 2
    try:
        validate_mnist_dir(config.data_dir)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    store = open_store(args)
    if config.init_checkpoint and (problem := _init_checkpoint_problem(store, config)):
        print(f"error: --init-checkpoint: {problem}", file=sys.stderr)
        return 2
    try:
        run_id = _submit(store, config, args, cluster)
    except (RunBusy, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.no_wait:
        run = store.existing(run_id)
        print(f"run {run_id} {run.status} in {store.root}; it starts when a slot frees (the dashboard or a "
              "waiting command line starts it)")
        return 0
    print(f"run {run_id} in {store.root} (watch it live in the dashboard)")
    if store.existing(run_id).status == QUEUED and not _wait_for_turn(store, run_id):  # several hosts: not queued
        return 1
    prepare_process(config.network)
    if config.workers > 1:
        print(f"{config.workers} data-parallel workers · global batch {config.batch_size} = {config.workers} × "
              f"{config.worker_batch} per worker · worker logs in {store.logs_dir / run_id}")
    return _execute(store, run_id, args.out, cluster)


def _init_checkpoint_problem(store: RunStore, config: TrainConfig) -> str | None:
    """Why the run could not start from its --init-checkpoint (None: it can), said before it is queued."""
    prepare_process(config.network)
    from core.model.checkpoint import CheckpointError, load  # deferred: MindSpore, after prepare_process
    try:
        loaded = load(checkpoint_for(store, config.init_checkpoint or ""))
    except (CheckpointError, ExplainedValueError) as e:
        return str(e)
    if loaded.config.network != config.network or loaded.config.hidden != config.hidden:
        return (f"{config.init_checkpoint} holds a {loaded.config.shape_label}, not the {config.shape_label} this "
                "run trains")
    return None


def _submit(store: RunStore, config: TrainConfig, args: argparse.Namespace, cluster: ClusterSpec) -> str:
    """Queue the run (this process trains it when its turn comes, unless --no-wait). A run spread over several
    hosts does not queue: every host must start it together (host 0 still refuses while a run trains)."""
    name = args.name or args.preset
    if args.node_rank > 0 or args.master_port is not None:
        return store.create_run(config, name=name, source="cli")
    queue = RunQueue(store)
    return queue.submit(config, name, "cli", submitter=os_user(),
                        waiter_pid=None if args.no_wait else os.getpid())


def _wait_for_turn(store: RunStore, run_id: str) -> bool:
    """Wait while the run is queued, saying where it stands; dispatch meanwhile (this process may be the only
    dispatcher). True when it may start here; False when it was cancelled (or Ctrl-C cancelled it)."""
    dispatcher, queue, said = launcher.dispatcher_for(store), RunQueue(store), None
    try:
        while True:
            dispatcher.tick()
            run = store.get(run_id)
            if run is None or run.status in FINISHED:
                print(f"run {run_id} {run.status if run else 'deleted'} before it started", file=sys.stderr)
                return False
            if run.status != QUEUED and run.pid == os.getpid():  # handed to this process (not to a worker)
                if said:
                    print(file=sys.stderr)
                return True
            if run.status != QUEUED and run.pid is not None:
                print(f"\nrun {run_id} was started in worker process {run.pid}: follow it in the dashboard",
                      file=sys.stderr)
                return False
            line = _queue_line(queue, run_id)
            if line != said:
                print("\r" + line, end="", file=sys.stderr, flush=True)
                said = line
            time.sleep(TICK_S)
    except KeyboardInterrupt:
        queue.cancel(run_id)
        print(f"\ncancelled run {run_id}", file=sys.stderr)
        return False


def _queue_line(queue: RunQueue, run_id: str) -> str:
    waiting = queue.waiting()
    mine = next((w for w in waiting if w.run.id == run_id), None)
    if mine is None:
        return "queued: starting..."
    if mine.held_by:
        when = f"starts once the paused run {mine.held_by} is resumed and ends, or is stopped"
    else:
        when = f"starts in {about(mine.starts_in_s)}" if mine.starts_in_s is not None else "start time unknown"
    slots = counted(queue.slots, "slot")
    return f"queued: position {mine.position} of {len(waiting)}, {when} ({slots}; Ctrl-C cancels)"


def _resume(args: argparse.Namespace) -> int:
    try:
        store = open_store(args)
        run = store.prepare_resume(args.resume, waiter_pid=os.getpid())
    except (RunBusy, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not _wait_for_turn(store, run.id):
        return 1
    prepare_process(run.config.network)
    print(f"resuming run {run.id} ({run.name}) in {store.root}")
    return _execute(store, run.id, args.out, cluster_from_args(args))


def cluster_from_args(args: argparse.Namespace) -> ClusterSpec:
    return ClusterSpec(local_workers=args.local_workers, master_addr=args.master_addr, master_port=args.master_port,
                       node_rank=args.node_rank, cluster_timeout_s=args.cluster_timeout)


def _execute(store: RunStore, run_id: str, out: str | None, cluster: ClusterSpec) -> int:
    from core.runs.worker.execute import execute  # deferred: imports mindspore, after prepare_process
    graph_cache.allow()  # a training process: its run's first graphs may come from the graph cache
    progress = ProgressBar()
    try:
        status = execute(store, run_id, [progress], cluster)
    except Exception as e:
        print(f"\nerror: {e}", file=sys.stderr)
        return 1
    finally:
        progress.close()
    run = store.existing(run_id)
    print(f"{status}: {run.message}")
    if out and (kept := store.checkpoint_file(run)):
        shutil.copyfile(kept, out)
        print(f"checkpoint copied to {out}")
    return 0 if status in ("completed", "early_stopped") else 1


if __name__ == "__main__":
    sys.exit(main())
