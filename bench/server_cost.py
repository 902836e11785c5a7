"""What watching a live run costs the server, per viewer update, for one app server and for two behind nginx, on
one PostgreSQL (figures for docs/deploy.md, not a test):

    .venv/bin/python -m bench.server_cost [--viewers 30] [--seconds 40]

Viewers are protocol-level clients (bench/ws_client.py: the live Train page's websocket messages, as a browser
tab sends them, rendering nothing), so the figures are the server's side alone: they do not share the two cores
with 30 Chromiums. While a LeNet-5 run trains (started through the queue, trained by the app server holding the
dispatcher's lease), each setting runs for --seconds: no viewer (the training's own rate), N viewers on one app
server, N viewers through nginx spread over two app servers. Reported: the app servers' CPU-seconds (their own
processes, not the training worker; nginx's too), the updates each viewer got per second, CPU-ms per update, and
the training's samples/s in each window. From the CPU per update, the cores a class of 60 and a school of 600
need at one update a second each (on paper: the measured cost times the rate; this machine has 2 cores).

nginx here spreads connections by client port (`hash $remote_port`), since every viewer comes from 127.0.0.1;
a deployment uses `ip_hash` (docs/deploy.md). It adds no X-Forwarded-* header here, so the servers on
127.0.0.1 see local users and ask no password: a measuring set-up on loopback, not one to deploy.

Records bench/results/server_cost.json (date, versions, machine)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load_test import cpu_seconds  # noqa: E402
from bench.record import save, stamp  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.runs.run_queue import RunQueue  # noqa: E402
from core.runs.store import RunStore  # noqa: E402
from core.runs.store.local_postgres import PostgresServer  # noqa: E402
from tests.support.helpers import wait_for  # noqa: E402
from tests.support.nginx import start_nginx  # noqa: E402
from tests.support.server import AS_DEPLOYED, start_server  # noqa: E402

def window(store: RunStore, run_id: str, url: str | None, viewers: int, seconds: float, pids: list[int]) -> dict:
    """One measuring window: the viewers (none: the training alone) for `seconds`."""
    s0, t0 = store.get(run_id).step, time.monotonic()
    c0 = sum(cpu_seconds(p) for p in pids)
    watched = []
    if viewers and url:
        out = subprocess.run([sys.executable, "-m", "bench.ws_client", url, "--sessions", str(viewers),
                              "--seconds", str(seconds)], cwd=ROOT, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=seconds + 120)
        watched = [SimpleNamespace(**d) for d in json.loads(out.stdout)]
    else:
        time.sleep(seconds)
    elapsed, cpu = time.monotonic() - t0, sum(cpu_seconds(p) for p in pids) - c0
    steps = store.get(run_id).step - s0
    updates = sum(w.charts_received for w in watched)
    half = elapsed / 2
    steady = [sum(1 for t in w.chart_times if t >= half) / (elapsed - half) for w in watched]
    return {"viewers": viewers, "seconds": elapsed, "server_cpu_s": cpu, "updates": updates,
            "updates_per_s_each": (sum(steady) / len(steady)) if steady else None,
            "min_updates_per_s": min(steady, default=None),
            "cpu_ms_per_update": (1000 * cpu / updates) if updates else None,
            "errors": sum(len(w.errors) + len(w.exceptions) for w in watched),
            "samples_per_s": steps * 64 / elapsed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--viewers", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=40.0)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="server-cost-"))
    pg = PostgresServer().start()
    servers, nginx = [], None
    try:
        url = pg.new_database()
        env = {"STUDIO_DATABASE_URL": url, "STUDIO_WARM_WORKERS": "0", **AS_DEPLOYED}
        servers = [start_server(tmp / f"app{i}", extra_env=env) for i in (1, 2)]
        nginx, nginx_url = start_nginx(tmp / "nginx", [s.url for s in servers], forwarded=False,
                                       balance="hash $remote_port")
        store = RunStore(tmp / "observer", url)
        run_id = RunQueue(store).submit(TrainConfig(epochs=200), "watched", "bench", "teacher")
        wait_for(lambda: store.get(run_id).step > 20, 300, "the run to train")
        app_pids = [s.proc.pid for s in servers]
        rows = {"training alone": window(store, run_id, None, 0, args.seconds, app_pids + [nginx.pid]),
                "one app server": window(store, run_id, servers[0].url, args.viewers, args.seconds, app_pids),
                "two app servers behind nginx": window(store, run_id, nginx_url, args.viewers, args.seconds,
                                                       app_pids + [nginx.pid])}
        store.request(run_id, "stop")
    finally:
        if nginx is not None:
            nginx.terminate()
        for s in servers:
            s.stop()
        pg.stop()
    for name, r in rows.items():
        print(f"{name:<30} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in r.items()))
    per_update = [r["cpu_ms_per_update"] for r in rows.values() if r["cpu_ms_per_update"]]
    paper = {n: max(per_update) * n / 1000 for n in (60, 600)}  # cores at one update/s each
    print(f"on paper, at one update a second each: 60 viewers {paper[60]:.2f} cores, 600 viewers {paper[600]:.1f} "
          "cores of app servers (besides the training)")
    save("server_cost", {**stamp("streamlit", "sqlalchemy", "psycopg"), "command": "python -m bench.server_cost "
                         f"--viewers {args.viewers} --seconds {args.seconds:g}", "viewers": args.viewers,
                         "run": "LeNet-5 defaults through the queue, trained on this machine", "rows": rows,
                         "cores_on_paper": paper})
    return 0


if __name__ == "__main__":
    sys.exit(main())
