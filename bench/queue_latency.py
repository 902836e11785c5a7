"""The run queue, measured (figures for docs/queue.md, not a pass/fail test):

1. dispatcher latency: a run ends, and the queued run behind it is taken from the queue and takes its first
   training step (real workers: MLP 784-32-10, 1 epoch on the bundled images), repeated;
2. ten submitters at once: ten `python -m core.cli.train --no-wait` processes started together, one run each; the
   app's dispatcher (here: this process's) trains them all: each once, in the documented order.

    .venv/bin/python -m bench.queue_latency [--repeats 3]

Records bench/results/queue.json (date, versions, machine)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.runs.launch import launcher  # noqa: E402
from core.runs.run_queue import RunQueue  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from core.runs.store.local_postgres import PostgresServer  # noqa: E402

TINY = TrainConfig(network="mlp", hidden=(32,), epochs=1)


def wait(predicate, timeout=300.0, poll=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise SystemExit("timed out")


def latency(repeats: int) -> list[dict]:
    store = RunStore(Path(tempfile.mkdtemp(prefix="queue-bench-")))
    launcher.serve(store)
    rows = []
    for i in range(repeats):
        first = launcher.start(store, TINY, name=f"first-{i}")
        second = launcher.start(store, TINY, name=f"second-{i}")
        freed = wait(lambda first=first: store.get(first).finished)
        taken = wait(lambda second=second: next((line.t for line in store.logs(second)
                                                 if "taken from the queue" in line.message), None))
        wait(lambda second=second: store.get(second).step >= 1)
        stepped = time.time()
        wait(lambda second=second: store.get(second).status == "completed", timeout=300, poll=0.1)
        rows.append({"taken_after_s": round(taken - freed, 3), "first_step_after_s": round(stepped - freed, 3)})
        print(f"round {i + 1}: taken from the queue {taken - freed:.2f} s after the slot freed; first step after "
              f"{stepped - freed:.2f} s", flush=True)
    return rows


def ten_submitters() -> dict:
    store = RunStore(Path(tempfile.mkdtemp(prefix="queue-bench-10-")))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-m", "core.cli.train", "--network", "mlp", "--hidden", "32", "--epochs", "1",
                               "--store", str(store.root), "--no-wait", "--name", f"submitter-{i}"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(10)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    queued_order = [w.run.name for w in RunQueue(store).waiting()]
    start = time.monotonic()
    launcher.serve(store)
    wait(lambda: all(r.status == "completed" for r in store.list_runs()), timeout=900, poll=0.2)
    wall = time.monotonic() - start
    runs = store.list_runs()
    taken = {r.name: sum("taken from the queue" in line.message for line in store.logs(r.id)) for r in runs}
    started_order = [r.name for r in sorted(runs, key=lambda r: r.started)]
    print(f"10 submitters: {len(runs)} runs, each started {set(taken.values())} time(s), all completed in {wall:.0f} s; "
          f"started in the queue's order: {started_order == queued_order}", flush=True)
    return {"runs": len(runs), "starts_per_run": sorted(set(taken.values())), "wall_s": round(wall, 1),
            "queued_order": queued_order, "started_order": started_order}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--postgresql", action="store_true",
                    help="the store on PostgreSQL 15 started here (fsync on): bench/results/queue-postgresql.json")
    args = ap.parse_args(argv)
    if not args.postgresql:
        save("queue", {**stamp(), "command": f"python -m bench.queue_latency --repeats {args.repeats}",
                       "database": "sqlite", "slots": RunQueue(RunStore(Path(tempfile.mkdtemp()))).slots,
                       "latency": latency(args.repeats), "ten_submitters": ten_submitters()})
        return 0
    server = PostgresServer(durable=True).start()
    try:
        os.environ["STUDIO_DATABASE_URL"] = server.new_database()  # the stores here and their child processes
        rows = latency(args.repeats)
        os.environ["STUDIO_DATABASE_URL"] = server.new_database()
        ten = ten_submitters()
        slots = RunQueue(RunStore(Path(tempfile.mkdtemp()))).slots
    finally:
        server.stop()  # this process's dispatcher threads end with it
    save("queue-postgresql", {**stamp("sqlalchemy", "psycopg"), "command": "python -m bench.queue_latency "
                              f"--repeats {args.repeats} --postgresql", "database": "postgresql 15, fsync on",
                              "slots": slots, "latency": rows, "ten_submitters": ten})
    return 0


if __name__ == "__main__":
    sys.exit(main())
