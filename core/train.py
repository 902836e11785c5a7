"""Command-line trainer: python -m core.train [options]

Every run is recorded in the run store (so it shows live in the dashboard) and checkpointed there;
--out also copies the final checkpoint to a path of your choice.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import fields

from core.config import LABELS, ConfigError, TrainConfig, parse_fields
from core.runtime import prepare_process

CHOICES = {"network": "NETWORKS", "style": "STYLES", "mode": "MODES", "optimizer": "OPTIMIZERS",
           "loss": "LOSSES", "amp_level": "AMP_LEVELS"}


def build_parser() -> argparse.ArgumentParser:
    import core.config as c
    ap = argparse.ArgumentParser(description="Train LeNet-5 or an MLP on MNIST with MindSpore.")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        if f.name in CHOICES:
            choices = getattr(c, CHOICES[f.name])
            ap.add_argument(flag, dest=f.name, choices=choices, default=default,
                            help=" | ".join(f"{k}: {LABELS.get(k, k)}" for k in choices) + f" (default {default})")
        else:
            ap.add_argument(flag, dest=f.name, default=None, metavar=f.type.split(" ")[0].upper(),
                            help=f"default {default}" + (" (the bundled 5,000 images)" if f.name == "data_dir" else ""))
    ap.add_argument("--name", default=None, help="a name for the run in the dashboard")
    ap.add_argument("--store", default=None, help="run store folder (default: $STUDIO_DATA_DIR or ./runs)")
    ap.add_argument("--out", default=None, help="also copy the final checkpoint here (.ckpt)")
    dist = ap.add_argument_group("several hosts (data-parallel with --workers N; see the README)")
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


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    values, errors = parse_fields({f.name: getattr(args, f.name) for f in fields(TrainConfig)
                                   if getattr(args, f.name) is not None})
    if errors:
        raise ConfigError(errors)
    return TrainConfig(**values).validate()


class ProgressBar:
    """One-line progress bar with ETA on stderr; epoch summaries on stdout."""

    def __init__(self, stream=sys.stderr, width: int = 30):
        self.stream, self.width, self.last = stream, width, 0.0

    def __call__(self, e: dict) -> None:
        if e["kind"] == "step" and (time.monotonic() - self.last > 0.2 or e["step"] == e["total_steps"]):
            self.last = time.monotonic()
            frac = e["step"] / e["total_steps"]
            bar = "#" * int(frac * self.width)
            self.stream.write(f"\r[{bar:<{self.width}}] {frac:6.1%} step {e['step']}/{e['total_steps']} "
                              f"epoch {e['epoch']} loss {e['loss']:.4f} {e['samples_per_s']:.0f} samples/s "
                              f"ETA {_duration(e['eta'])}   ")
            self.stream.flush()
        elif e["kind"] == "epoch":
            self.stream.write("\r" + " " * 110 + "\r")
            val = "" if e["val_acc"] is None else f"  val_loss {e['val_loss']:.4f}  val_acc {e['val_acc']:.4f}"
            print(f"epoch {e['epoch']:>3}  train_loss {e['train_loss']:.4f}  train_acc {e['train_acc']:.4f}{val}  "
                  f"{e['epoch_seconds']:.1f}s", flush=True)
        elif e["kind"] == "phase" and e["phase"] == "compiling":
            self.stream.write("compiling the graph...\r")
            self.stream.flush()
        elif e["kind"] == "log":
            print(e["message"], flush=True)


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}:{s % 60:02d}"


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
    from core.data_source import validate_mnist_dir
    from core.idx import DataError
    from core.store import RunBusy, RunStore
    try:
        validate_mnist_dir(config.data_dir)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        store = RunStore(args.store)
        run_id = store.create_run(config, name=args.name, source="cli")
    except (RunBusy, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    prepare_process(config.network)
    print(f"run {run_id} in {store.root} (watch it live in the dashboard)")
    if config.workers > 1:
        print(f"{config.workers} data-parallel workers · global batch {config.batch_size} = {config.workers} × "
              f"{config.worker_batch} per worker · worker logs in {store.logs_dir / run_id}")
    return _execute(store, run_id, args.out, cluster)


def _resume(args: argparse.Namespace) -> int:
    from core.store import RunBusy, RunStore
    try:
        store = RunStore(args.store)
        run = store.prepare_resume(args.resume)
    except (RunBusy, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    prepare_process(run.config.network)
    print(f"resuming run {run.id} ({run.name}) in {store.root}")
    return _execute(store, run.id, args.out, cluster_from_args(args))


def cluster_from_args(args: argparse.Namespace):
    from core.distributed import ClusterSpec
    return ClusterSpec(local_workers=args.local_workers, master_addr=args.master_addr, master_port=args.master_port,
                       node_rank=args.node_rank, cluster_timeout_s=args.cluster_timeout)


def _execute(store, run_id: str, out: str | None, cluster=None) -> int:
    from core.execute import execute
    try:
        status = execute(store, run_id, echo=ProgressBar(), cluster=cluster)
    except Exception as e:
        print(f"\nerror: {e}", file=sys.stderr)
        return 1
    run = store.get(run_id)
    print(f"{status}: {run.message}")
    if out and run.checkpoint:
        shutil.copyfile(run.checkpoint, out)
        print(f"checkpoint copied to {out}")
    return 0 if status in ("completed", "early_stopped") else 1


if __name__ == "__main__":
    sys.exit(main())
