"""The 12-trial MLP sweep of bench/sweep_wall.py with no local slot and one Dask worker (on this machine,
127.0.0.1), its runs coming back two ways: through the relay (a SQLite store: the worker's scratch store
relayed over Dask queues) and directly (the store on PostgreSQL 15, started here: the worker records into it).
Rounds interleave the two. Figures for docs/queue.md, not a test.

    .venv/bin/python -m bench.remote_paths [--rounds 2]

Records bench/results/remote_paths.json."""
import argparse
import statistics
import sys

from bench.record import save, stamp
from bench.sweep_wall import SHORT, one
from core.runs.store.local_postgres import PostgresServer


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    server = PostgresServer(durable=True).start()
    try:
        rows = [one(0, SHORT, dask=1, database_url=url) for _ in range(args.rounds)
                for url in (None, server.new_database())]
    finally:
        server.stop()
    medians = {kind: statistics.median(r["wall_s"] for r in rows if r["database"] == kind)
               for kind in ("sqlite", "postgresql")}
    print(f"median wall: relay (SQLite) {medians['sqlite']:.1f} s, direct (PostgreSQL) {medians['postgresql']:.1f} s")
    save("remote_paths", {**stamp("optuna", "distributed", "sqlalchemy", "psycopg"),
                          "command": f"python -m bench.remote_paths --rounds {args.rounds}", "rows": rows,
                          "median_wall_s": medians})
    return 0


if __name__ == "__main__":
    sys.exit(main())
