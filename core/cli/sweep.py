"""Sweeps from the command line: queue a search over settings (Optuna), wait for its runs, print the results.

    python -m core.cli.sweep --network mlp --epochs 2 --grid learning_rate=0.1,0.01 --seeds 2 --store DIR --json
    python -m core.cli.sweep --random 8 --vary learning_rate=1e-4:1e-1:log --vary batch_size=32,64,128 --prune
    python -m core.cli.sweep --tpe 12 --vary learning_rate=1e-3:0.3:log --vary momentum=0.5:0.99

Every other option is a setting of the runs, as `python -m core.cli.train` takes them. While it waits it also
dispatches (the queue's runs start in worker processes), so it needs no app server; Ctrl-C leaves the sweep
queued (an app server, or the same command with --resume SWEEP, carries it on)."""
from __future__ import annotations

import argparse
import json
import sys
import time

from core.config import ConfigError
from core.i18n import counted
from core.messages import Explained
from core.runs.launch import launcher
from core.runs import sweeps
from core.runs.people.actions import Actions
from core.runs.people.permissions import NotAllowed, command_line_person, os_user
from core.runs.launch.dispatcher import TICK_S
from core.runs.store import RunStore
from core.runs.store.arguments import add_store_arguments, open_store
from core.options import add_config_arguments, config_from_args


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="Search over training settings with Optuna; every setting is a "
                                             "group of queued runs (one per seed).")
    search = ap.add_mutually_exclusive_group()
    search.add_argument("--grid", action="append", default=[], metavar="NAME=A,B",
                        help="a grid: every combination of these lists (repeat for more settings)")
    search.add_argument("--random", type=int, default=None, metavar="N", help="N random settings from --vary")
    search.add_argument("--tpe", type=int, default=None, metavar="N", help="N settings chosen by TPE from --vary")
    ap.add_argument("--vary", action="append", default=[], metavar="NAME=A,B|LOW:HIGH[:log]",
                    help="a setting to vary for --random/--tpe: a list, or a range (log-uniform with :log)")
    ap.add_argument("--seeds", type=int, default=1, help="runs per setting, seeds SEED, SEED+1, ... (default 1)")
    ap.add_argument("--prune", action="store_true",
                    help="stop settings early whose validation accuracy is below the median (Optuna MedianPruner)")
    ap.add_argument("--sweep-name", default="", help="a name for the sweep")
    add_store_arguments(ap)
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--resume", default=None, metavar="SWEEP", help="wait for (and carry on) an existing sweep")
    ap.add_argument("--cancel", default=None, metavar="SWEEP",
                    help="close a sweep: its queued runs are cancelled and its training runs stopped")
    ap.add_argument("--preset", default=None, help=argparse.SUPPRESS)
    add_config_arguments(ap)
    return ap


def spec_from_args(args: argparse.Namespace) -> sweeps.SweepSpec:
    base = config_from_args(args)
    if args.grid:
        spaces, sampler, trials = [sweeps.parse_space(g) for g in args.grid], "grid", 0
    else:
        sampler = "random" if args.random is not None else "tpe"
        spaces, trials = [sweeps.parse_space(v) for v in args.vary], args.random or args.tpe or 0
    return sweeps.SweepSpec(base, tuple(spaces), sampler, trials, args.seeds, args.prune, args.sweep_name)


def wait(store: RunStore, sweep_id: str, quiet: bool) -> None:
    dispatcher, said = launcher.dispatcher_for(store), None
    while not sweeps.is_done(store, sweep_id):
        dispatcher.tick()
        sweeps.advance(store, sweep_id)
        rows = sweeps.trial_rows(store, sweep_id)
        line = "  ".join(f"{s}: {sum(r['status'] == s for r in rows)}" for s in
                         ("queued", "running", "completed", "pruned", "failed") if any(r["status"] == s for r in rows))
        if not quiet and line != said:
            print(f"\r{sweep_id}: {line}   ", end="", file=sys.stderr, flush=True)
            said = line
        time.sleep(TICK_S)
    if not quiet:
        print(file=sys.stderr)


def _cancel(store: RunStore, sweep_id: str) -> int:
    info = next((s for s in sweeps.list_sweeps(store) if s.id == sweep_id), None)
    if info is None:
        print(f"error: no sweep {sweep_id} in {store.where}", file=sys.stderr)
        return 2
    try:
        ended = Actions(store, command_line_person(store)).cancel_sweep(info)
    except NotAllowed as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"sweep {sweep_id} cancelled: {counted(ended, 'run')} cancelled or asked to stop")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = open_store(args)
    if args.cancel:
        return _cancel(store, args.cancel)
    try:
        sweep_id = args.resume or sweeps.create(store, spec_from_args(args), submitter=os_user())
    except (ConfigError, Explained) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"sweep {sweep_id} in {store.root} (watch it in the dashboard)", file=sys.stderr)
    try:
        wait(store, sweep_id, quiet=args.json)
    except KeyboardInterrupt:
        print(f"\nstopped waiting; the sweep stays queued: python -m core.cli.sweep --resume {sweep_id}",
              file=sys.stderr)
        return 130
    rows = sweeps.trial_rows(store, sweep_id)
    if args.json:
        print(json.dumps({"sweep": sweep_id, "trials": rows}, indent=1, default=list))
    else:
        for r in sorted(rows, key=lambda r: -(r["best_val_acc"] or 0)):
            acc = f"{r['best_val_acc']:.4f}" if r["best_val_acc"] is not None else "–"
            print(f"#{r['trial']:<3} seed {r['seed']:<4} {r['status']:<10} best val acc {acc}  {r['config']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
