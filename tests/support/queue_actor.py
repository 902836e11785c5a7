"""Processes for the queue's tests: a dispatcher whose "worker" is a stand-in that finishes each run after a
moment (so that many runs pass quickly), and a submitter. Every start is appended to a log file, one line per
start, so that a test can prove no run starts twice.

    python -m tests.support.queue_actor dispatch STORE LOG SECONDS [RUN_S]   (until its stdin ends, SECONDS at most)
    python -m tests.support.queue_actor submit STORE SUBMITTER N
"""
import os
import sys
import threading
import time

from core.config import TrainConfig
from core.runs.launch.dispatcher import Dispatcher
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore


def stand_in_worker(log: str, run_s: float):
    def spawn(store: RunStore, run_id: str) -> None:
        with open(log, "a") as f:  # one short append per start: atomic between processes
            f.write(f"{run_id} {os.getpid()} {time.time():.3f}\n")
        store.update(run_id, status="running", pid=os.getpid(), heartbeat=time.time())

        def finish():
            time.sleep(run_s)
            store.finish(run_id, "completed", "stand-in worker")
        threading.Thread(target=finish, daemon=True).start()
    return spawn


def main(argv):
    if argv[0] == "dispatch":
        store, log, seconds = RunStore(argv[1]), argv[2], float(argv[3])
        run_s = float(argv[4]) if len(argv) > 4 else 0.05
        stop = threading.Event()
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
        Dispatcher(store, stand_in_worker(log, run_s)).start_thread()
        print("dispatching", flush=True)
        stop.wait(seconds)
        time.sleep(run_s + 0.2)  # let the last stand-in finish its run
    elif argv[0] == "submit":
        store, who, n = RunStore(argv[1]), argv[2], int(argv[3])
        for i in range(n):
            RunQueue(store).submit(TrainConfig(network="mlp", epochs=1), f"{who}-{i}", "test", submitter=who)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
