"""Where a training epoch's time goes through the command line (a benchmark that prints figures, not a test):
the graph calls of K steps, the epoch's last step (one call that also returns the gradients), reporting each
step (events: the run store's batched rows, the progress bar), and the rest of the loop (making the batches,
the step planner).

    .venv/bin/python -m bench.loop_breakdown [--epochs 8]

Each network trains the bundled images in its own process (`core.cli.train`'s main with its defaults and a
fresh store), with timers wrapped around the loop's functions; the figures are medians over the epochs after
the first two (the first compiles). Writes bench/results/loop_breakdown.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("graph calls of K steps", "the last step, with gradients", "reporting the steps", "batches and planner")


def one_network(network: str, epochs: int) -> dict:
    """Per-epoch milliseconds of each part, measured in this process (it trains `network`)."""
    import core.training.loop as loop
    import core.training.step_calls as step_calls
    spent: dict[str, float] = collections.defaultdict(float)

    def timed(module, name: str, part: str) -> None:
        inner = getattr(module, name)

        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - started
        setattr(module, name, wrapper)

    timed(loop, "take_group", "take_group")
    timed(loop, "_count", PARTS[2])
    timed(step_calls, "_take_steps", PARTS[0])
    timed(step_calls, "_take_step", PARTS[1])
    train_epoch, per_epoch = loop._train_epoch, []

    def epoch(state, number, iterator):
        spent.clear()
        started = time.perf_counter()
        tally = train_epoch(state, number, iterator)
        total = time.perf_counter() - started
        rest = total - spent["take_group"] - spent[PARTS[2]]
        per_epoch.append({"epoch_ms": 1e3 * total, PARTS[0]: 1e3 * spent[PARTS[0]], PARTS[1]: 1e3 * spent[PARTS[1]],
                          PARTS[2]: 1e3 * spent[PARTS[2]], PARTS[3]: 1e3 * rest})
        return tally
    loop._train_epoch = epoch
    from core.cli.train import main
    with tempfile.TemporaryDirectory() as store:
        if main(["--network", network, "--epochs", str(epochs), "--store", store]) != 0:
            raise RuntimeError(f"training {network} failed (its messages are above)")
    later = per_epoch[2:] or per_epoch
    return {key: round(statistics.median(e[key] for e in later), 2) for key in ("epoch_ms", *PARTS)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--one", choices=("lenet5", "mlp"), help=argparse.SUPPRESS)  # a child process's network
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_network(args.one, args.epochs)))
        return
    rows = []
    for network in ("lenet5", "mlp"):
        p = subprocess.run([sys.executable, "-m", "bench.loop_breakdown", "--one", network, "--epochs",
                            str(args.epochs)], cwd=ROOT, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"{network}: {p.stderr[-2000:]}")
        row = {"network": network, **json.loads(p.stdout.strip().splitlines()[-1])}
        rows.append(row)
        print(f"{network:6} epoch {row['epoch_ms']:6.1f} ms: " + ", ".join(
            f"{part} {row[part]:.1f} ms ({row[part] / row['epoch_ms']:.0%})" for part in PARTS), flush=True)
    save("loop_breakdown", {"command": "python -m bench.loop_breakdown " + " ".join(sys.argv[1:]), **stamp(),
                            "epochs": args.epochs, "rows": rows})


if __name__ == "__main__":
    main()
