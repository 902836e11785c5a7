"""The run store on SQLite and on PostgreSQL, and the SQLite store before SQLAlchemy (commit ed17fa8's
core/runs/store.py, read with git), measured side by side (figures for docs/deploy.md, not a test):

1. write path: what a worker records per reported block of steps (core/runs/worker/recording.py writes every 8 steps
   in one transaction) and per epoch (an epoch row, a checkpoint-sized artifact on PostgreSQL, layer statistics
   of the MLP's 6 parameters × weight and gradient) — steps per second the store takes;
2. reads a page makes every refresh: a run's row, its downsampled steps (10,000 steps) and its epochs;
3. the queue: submit and claim (the dispatcher's locked transaction), per operation;
4. a checkpoint (1.1 MB, the MLP's) kept in and fetched from the database.

Rounds alternate the stores (SQLite in a temporary folder, with SQLite's default synchronous=FULL; PostgreSQL 15
on 127.0.0.1 started here with fsync on, as a real server runs).

    .venv/bin/python -m bench.store_backends [--rounds 3]

Records bench/results/store_backends.json (date, versions, machine)."""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.runs.run_queue import RunQueue  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from core.runs.store.local_postgres import PostgresServer  # noqa: E402
from core.training.events import EpochMetrics  # noqa: E402
from core.training.layer_stats import LayerStat  # noqa: E402

STEPS, BLOCK, STEPS_PER_EPOCH = 2_000, 8, 400
PARAMS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias")
CHECKPOINT = os.urandom(1_100_000)


def stats(epoch: int) -> list[LayerStat]:
    edges, counts = tuple(i / 10 for i in range(-15, 16)), tuple(range(30))
    return [LayerStat(epoch, p, kind, 0.0, 0.1, -1.0, 1.0, 3.0, 0.0, edges, counts)
            for p in PARAMS for kind in ("weight", "grad")]


BEFORE = "ed17fa8"  # the last commit of the sqlite3 store


def store_before():
    """The RunStore class of commit BEFORE (None where git or that commit is not here)."""
    out = subprocess.run(["git", "show", f"{BEFORE}:core/runs/store.py"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    path = Path(tempfile.mkdtemp(prefix="store-before-")) / "store_before.py"
    path.write_text(out.stdout)
    spec = importlib.util.spec_from_file_location("store_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RunStore


def write_path(store: RunStore) -> float:
    """Steps per second recorded, with an epoch's records every STEPS_PER_EPOCH steps."""
    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)
    t0 = time.perf_counter()
    for first in range(1, STEPS + 1, BLOCK):
        rows = [(s, 1 + s // STEPS_PER_EPOCH, 1.0 / s, s * 0.001) for s in range(first, first + BLOCK)]
        store.add_steps(run_id, rows, step=rows[-1][0], epoch=rows[-1][1])
        if (first + BLOCK - 1) % STEPS_PER_EPOCH == 0:
            epoch = (first + BLOCK - 1) // STEPS_PER_EPOCH
            store.add_epoch(run_id, EpochMetrics(epoch=epoch, train_loss=0.5, train_acc=0.8, val_loss=0.6,
                                                 val_acc=0.8, epoch_seconds=1.0, samples_per_s=1000.0, elapsed=1.0))
            store.add_layer_stats(run_id, stats(epoch))
            path = store.checkpoint_path(run_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(CHECKPOINT)
            if hasattr(store, "keep_file"):
                store.keep_file(run_id, "model.ckpt")
    return STEPS / (time.perf_counter() - t0)


def page_reads(store: RunStore) -> float:
    """Milliseconds for one refresh's reads of a 10,000-step run."""
    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)
    store.add_steps(run_id, [(s, 1 + s // 1000, 1.0 / s, s * 0.001) for s in range(1, 10_001)], step=10_000)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        store.get(run_id), store.steps(run_id), store.epochs(run_id), store.validations(run_id)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def queue_ops(store: RunStore) -> dict:
    queue, n = RunQueue(store, slots=64), 40
    t0 = time.perf_counter()
    ids = [queue.submit(TrainConfig(network="mlp"), f"q{i}", "bench", f"user{i % 4}") for i in range(n)]
    submit = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    claimed = [queue.claim_next() for _ in ids]
    claim = (time.perf_counter() - t0) / n
    assert all(claimed)
    t0 = time.perf_counter()
    return {"submit_ms": submit * 1000, "claim_ms": claim * 1000}


def artifact(store: RunStore, other: RunStore) -> dict:
    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)
    path = store.checkpoint_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(CHECKPOINT)
    t0 = time.perf_counter()
    store.keep_file(run_id, "model.ckpt")
    keep = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = other.file(run_id)
    fetch = time.perf_counter() - t0
    assert got is None or got.read_bytes() == CHECKPOINT
    return {"keep_ms": keep * 1000, "fetch_ms": fetch * 1000}


def measure(kind: str, server: PostgresServer, before) -> dict:
    folder = Path(tempfile.mkdtemp(prefix=f"store-bench-{kind}-"))
    if kind == "sqlite-before":
        store = before(folder / "a")
        return {"steps_per_s": write_path(store), "page_reads_ms": page_reads(store)}  # its queue was elsewhere
    url = server.new_database() if kind == "postgresql" else None
    store, other = RunStore(folder / "a", url), RunStore(folder / "b", url)
    return {"steps_per_s": write_path(store), "page_reads_ms": page_reads(store), **queue_ops(store),
            **(artifact(store, other) if kind == "postgresql" else {})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    before = store_before()
    kinds = (("sqlite-before",) if before else ()) + ("sqlite", "postgresql")
    server = PostgresServer(durable=True).start()
    try:
        rounds = [{kind: measure(kind, server, before) for kind in kinds} for _ in range(args.rounds)]
    finally:
        server.stop()
    medians = {kind: {k: statistics.median(r[kind][k] for r in rounds) for k in rounds[0][kind]} for kind in kinds}
    print(f"{args.rounds} rounds, medians:")
    for kind, m in medians.items():
        print(f"{kind:<11} " + "  ".join(f"{k} {v:,.1f}" for k, v in m.items()))
    save("store_backends", {**stamp("sqlalchemy", "psycopg"), "command": f"python -m bench.store_backends --rounds "
                            f"{args.rounds}", "postgresql": "15 (Debian), fsync on, 127.0.0.1",
                            "rounds": rounds, "medians": medians})
    return 0


if __name__ == "__main__":
    sys.exit(main())
