"""Runs queued behind each other on an app server's warm workers (a benchmark that prints figures, not a test):
four MLP runs of the default settings but one epoch (the graphs its warm worker compiles ahead) submitted at once to a store whose dispatcher keeps a
warm worker per network ahead, as the app server does (`launcher.serve`, STUDIO_WARM_WORKERS=1); one slot, so each
run waits for the one before. Per run after the first: from the run before it ending to its own first step done
(the queue's tick, the hand-over, and whatever the worker does between two runs), by the runs' logs.

    .venv/bin/python -m bench.warm_queue [--reps 3] [--code DIR ...]

--code: checkouts to measure in turn, interleaved (each round runs in a new process with that checkout's `core`).
Records bench/results/warm_queue.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 4


def one_round() -> list[float]:
    """In this process, with the `core` of STUDIO_BENCH_CODE: the gaps (s) between a run's end and the next run's
    first step."""
    sys.path.insert(0, os.environ["STUDIO_BENCH_CODE"])
    from core.config import TrainConfig
    from core.runs.launch import launcher
    from core.runs.launch.warm_pool import log_path
    from core.runs.run_queue import RunQueue
    from core.runs.store import RunStore
    os.environ.update(STUDIO_WARM_WORKERS="1", STUDIO_SLOTS="1")
    store = RunStore(tempfile.mkdtemp(prefix="warm-queue-"))
    launcher.serve(store)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(
                log_path(store, n).exists() and "warm worker ready" in log_path(store, n).read_text(errors="replace")
                for n in ("lenet5", "mlp")):
            time.sleep(0.2)
        time.sleep(3.0)  # as a server open for a while: its workers loaded and compiled
        ids = [RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), f"queued {i}", "dashboard", "")
               for i in range(RUNS)]
        launcher.dispatcher_for(store).tick()
        while time.monotonic() < deadline + 300 and any(store.get(i).active or store.get(i).status == "queued"
                                                        for i in ids):
            time.sleep(0.2)
        runs = sorted((store.get(i) for i in ids), key=lambda r: r.started or 0)
        gaps = []
        for before, run in zip(runs, runs[1:], strict=False):
            ended = next(line.t for line in store.logs(before.id) if line.message.startswith("completed"))
            first = next(line.t for line in store.logs(run.id) if line.message.startswith("first step"))
            gaps.append(round(first - ended, 2))
        return gaps
    finally:
        launcher.shutdown(store)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--code", nargs="+", type=Path, default=[ROOT])
    args = ap.parse_args(argv)
    rows = []
    for rep in range(args.reps):
        for code in args.code:  # interleaved: one round of each checkout, then the next round
            env = dict(os.environ, STUDIO_BENCH_CODE=str(code.resolve()), PYTHONPATH="")
            done = subprocess.run([sys.executable, __file__, "--one-round"], env=env, capture_output=True, text=True,
                                  timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"a round on {code} failed: {done.stderr[-3000:]}")
            gaps = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"code": str(code.resolve()), "round": rep + 1, "end_to_next_first_step_s": gaps})
            print(json.dumps(rows[-1]), flush=True)
    sys.path.insert(0, str(ROOT))
    from bench.record import save, stamp
    command = "python -m bench.warm_queue " + " ".join(sys.argv[1:] if argv is None else argv)
    out = {"command": command.strip(), **stamp(), "rows": rows}
    save("warm_queue", out)
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--one-round"]:
        print(json.dumps(one_round()), flush=True)
        os._exit(0)  # the pool's threads and waiting workers go with the process
    main()
