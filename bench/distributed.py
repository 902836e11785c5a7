"""Epoch time with 1 vs 2 data-parallel workers (msrun) on this machine, same global batch.

Each case is a real `python -m core.cli.train` run in its own store, interleaved 1, 2, 1, 2 ...; the figure
is the median epoch time after the first epoch (which includes graph compilation), read from the
store. Wall time includes start-up (msrun starts a scheduler and the workers, each importing MindSpore).

    .venv/bin/python -m bench.distributed [--network lenet5] [--epochs 4] [--repeats 2]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp

ROOT = Path(__file__).resolve().parent.parent


def one(network: str, workers: int, epochs: int) -> dict:
    from core.runs.store import RunStore
    tmp = Path(tempfile.mkdtemp())
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "core.cli.train", "--network", network, "--epochs", str(epochs),
                        "--workers", str(workers), "--store", str(tmp)], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(p.stdout[-2000:] + p.stderr[-2000:])
    store = RunStore(tmp)
    run = store.list_runs()[0]
    later = [e.epoch_seconds for e in store.epochs(run.id)][1:]
    return {"wall_s": wall, "epoch_s": statistics.median(later), "val_acc": run.best_val_acc}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--network", default="lenet5", choices=("lenet5", "mlp"))
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    results = {1: [], 2: []}
    for r in range(args.repeats):
        for workers in (1, 2):
            res = one(args.network, workers, args.epochs)
            results[workers].append(res)
            print(f"{args.network} workers={workers} repeat {r + 1}: epoch {res['epoch_s']:.2f} s (median after "
                  f"the first), wall {res['wall_s']:.1f} s, val acc {res['val_acc']:.4f}", flush=True)
    summary = {w: {"epoch_s": statistics.median(x["epoch_s"] for x in v),
                   "wall_s": statistics.median(x["wall_s"] for x in v)} for w, v in results.items()}
    ratio = summary[2]["epoch_s"] / summary[1]["epoch_s"]
    print(f"\n{args.network}, 5,000 bundled images, global batch 64, {args.epochs} epochs:")
    for w, s in summary.items():
        print(f"  {w} worker(s): {s['epoch_s']:.2f} s per epoch, {s['wall_s']:.1f} s wall")
    print(f"  2 workers / 1 worker epoch time: {ratio:.2f}x")
    save(f"distributed-{args.network}", {
        "command": f"python -m bench.distributed --network {args.network} --epochs {args.epochs} --repeats {args.repeats}",
        **stamp(), "network": args.network, "epochs": args.epochs, "runs": results, "summary": summary,
        "ratio_2_over_1": ratio})
    return 0


if __name__ == "__main__":
    sys.exit(main())
