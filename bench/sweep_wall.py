"""A 12-trial MLP sweep end to end (`python -m core.cli.sweep`, random search over the learning rate, 2 epochs on
the bundled images), and a 2-setting LeNet-5 sweep of 6 epochs each (long runs): wall time with 1 slot and a new
worker process per run (STUDIO_REUSE_WORKERS=0), with 1 slot, with 2 slots (STUDIO_SLOTS) and with 1 slot plus 1
Dask worker (a scheduler and a worker on 127.0.0.1 of this same machine: core/runs/launch/dask_local.py),
interleaved.
Records bench/results/sweep_wall.json.

    .venv/bin/python -m bench.sweep_wall [--rounds 1]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp
from core.runs.launch.dask_local import Cluster

ROOT = Path(__file__).resolve().parent.parent


SHORT = ["--network", "mlp", "--epochs", "2", "--random", "12", "--vary", "learning_rate=1e-3:3e-1:log"]
LONG = ["--network", "lenet5", "--epochs", "6", "--grid", "learning_rate=0.01,0.02"]


def one(slots: int, sweep: list[str] = SHORT, dask: int = 0, database_url: str | None = None,
        reuse: bool = True) -> dict:
    """One sweep by the command line; database_url: the store's database (default: SQLite in its folder); reuse:
    a run's worker process trains the next run (core/runs/launch/warm_pool.py)."""
    store = tempfile.mkdtemp(prefix=f"sweep-wall-{slots}-")
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDIO_SLOTS=str(slots), STUDIO_REUSE_WORKERS="1" if reuse else "0")
    env.pop("STUDIO_DATABASE_URL", None)
    if database_url:
        env["STUDIO_DATABASE_URL"] = database_url
    cluster = Cluster(Path(store) / "dask", workers=dask) if dask else None
    if cluster is not None:
        env["STUDIO_DASK_SCHEDULER"] = cluster.address
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "core.cli.sweep", *sweep, "--store", store, "--json"],
                           cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        if cluster is not None:
            cluster.close()
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    trials = json.loads(p.stdout)["trials"]
    best = max(t["best_val_acc"] or 0.0 for t in trials)
    statuses = {s: sum(t["status"] == s for t in trials) for s in sorted({t["status"] for t in trials})}
    remote = sum(1 for t in trials if t.get("executor"))
    print(f"{' '.join(sweep)} · {slots} slot(s) + {dask} Dask worker(s), workers reused: {reuse}: {len(trials)} "
          f"runs in {wall:.0f} s "
          f"({statuses}; {remote} on Dask); best validation accuracy {best:.4f}", flush=True)
    return {"sweep": " ".join(sweep), "slots": slots, "dask_workers": dask, "reuse": reuse, "wall_s": round(wall, 1),
            "statuses": statuses, "on_dask": remote, "best_val_acc": best,
            "database": "postgresql" if database_url else "sqlite"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    rows = [one(slots, sweep, dask, reuse=reuse) for _ in range(args.rounds) for sweep in (SHORT, LONG)
            for slots, dask, reuse in ((1, 0, False), (1, 0, True), (2, 0, True), (1, 1, True))]
    save("sweep_wall", {**stamp("optuna", "distributed"), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
