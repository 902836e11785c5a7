"""A 12-trial MLP sweep end to end (`python -m core.sweep`, random search over the learning rate, 2 epochs on
the bundled images), and a 2-setting LeNet-5 sweep of 6 epochs each (long runs): wall time with 1 slot and with
2 slots (STUDIO_SLOTS) on this machine.
Records bench/results/sweep_wall.json.

    .venv/bin/python -m bench.sweep_wall [--rounds 1]

Dask executors (more machines) are not built yet, so "one local slot plus one Dask worker" is not measured."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp

ROOT = Path(__file__).resolve().parent.parent


SHORT = ["--network", "mlp", "--epochs", "2", "--random", "12", "--vary", "learning_rate=1e-3:3e-1:log"]
LONG = ["--network", "lenet5", "--epochs", "6", "--grid", "learning_rate=0.01,0.02"]


def one(slots: int, sweep: list[str] = SHORT) -> dict:
    store = tempfile.mkdtemp(prefix=f"sweep-wall-{slots}-")
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDIO_SLOTS=str(slots))
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "core.sweep", *sweep, "--store", store, "--json"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    trials = json.loads(p.stdout)["trials"]
    best = max(t["best_val_acc"] or 0.0 for t in trials)
    statuses = {s: sum(t["status"] == s for t in trials) for s in sorted({t["status"] for t in trials})}
    print(f"{' '.join(sweep)} · {slots} slot(s): {len(trials)} runs in {wall:.0f} s ({statuses}); best validation "
          f"accuracy {best:.4f}", flush=True)
    return {"sweep": " ".join(sweep), "slots": slots, "wall_s": round(wall, 1), "statuses": statuses,
            "best_val_acc": best}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    rows = [one(slots, sweep) for _ in range(args.rounds) for sweep in (SHORT, LONG) for slots in (1, 2)]
    save("sweep_wall", {**stamp("optuna"), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
