"""A team's deployment on separate hosts (Linux network namespaces, tests/support/hosts.py): PostgreSQL on one, two app
servers on two others, a Dask scheduler with app server A and two Dask workers on two more. The workers and app
server B run with app server A's store folder hidden (an empty tmpfs over it), and A with B's, so this passes
only if nothing reads another host's disk: everything goes through the one database.

One scenario, in order: two people start runs on the two app servers at once; a 4-trial sweep started on B
spreads over both workers; a long run's live steps are read on B while it trains on a worker; that worker is
killed (the run is interrupted within 10 s) and the run resumes on the other one from its checkpoint. At the
end the database holds each run once, every step once and in order, and B reads every checkpoint.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from core import PROJECT_ROOT
from core.model import checkpoint
from core.runs.store import RunStore
from tests.support.helpers import wait_for
from tests.support.hosts import Hosts
from tests.support.postgres import started_postgres

PY = sys.executable
DASK = str(Path(sys.executable).with_name("dask"))
TINY = ["--network", "mlp", "--hidden", "32", "--epochs", "2"]


@pytest.fixture(scope="module")
def team(tmp_path_factory, small_mnist):
    root = tmp_path_factory.mktemp("team")
    hosts = Hosts()
    pg = None
    try:
        addr = {name: hosts.add(name) for name in ("db", "appa", "appb", "w1", "w2")}
        pg = started_postgres(addr["db"], on_host=hosts.command("db", []), clients=f"{hosts.subnet}.0/24")
        url = pg.new_database()
        folders = {name: root / name for name in ("appa", "appb", "w1", "w2")}
        for folder in folders.values():
            folder.mkdir()
        env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), STUDIO_DATABASE_URL=url, STUDIO_DISPATCH="1",
                   STUDIO_WARM_WORKERS="0", STUDIO_SLOTS="0", STUDIO_PASSWORD="team-secret",
                   STUDIO_DASK_SCHEDULER=f"tcp://{addr['appa']}:8786", DASK_DISTRIBUTED__WORKER__DAEMON="False")
        env.pop("STUDIO_DATA_DIR", None)
        hosts.popen("appa", [DASK, "scheduler", "--host", addr["appa"], "--port", "8786", "--dashboard-address",
                             f"{addr['appa']}:0"], log=root / "scheduler.log", env=env, cwd=PROJECT_ROOT)
        app_hidden = {"appa": (folders["appb"],), "appb": (folders["appa"],)}
        for name in ("w1", "w2"):
            hosts.popen(name, [DASK, "worker", env["STUDIO_DASK_SCHEDULER"], "--host", addr[name], "--nthreads", "1",
                               "--resources", "train=1", "--local-directory", str(folders[name]),
                               "--dashboard-address", f"{addr[name]}:0"],
                        hide=(folders["appa"], folders["appb"]), log=root / f"{name}.log", env=env, cwd=PROJECT_ROOT)
        for name in ("appa", "appb"):
            hosts.popen(name, [PY, "-m", "ui.serve", "--store", str(folders[name]), "--server.address", addr[name],
                               "--server.port", "8501", "--server.headless", "true"],
                        hide=app_hidden[name], log=root / f"{name}.log", env=env, cwd=PROJECT_ROOT)
        for name in ("appa", "appb"):
            wait_for(lambda name=name: _healthy(f"http://{addr[name]}:8501"), 120, f"app server {name}")
        yield Team(hosts, addr, folders, url, env, app_hidden, root, small_mnist)
    finally:
        if pg is not None:
            pg.stop()
        hosts.close()


def _healthy(url: str) -> bool:
    try:
        return urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return False


class Team:
    def __init__(self, hosts, addr, folders, url, env, app_hidden, root, data):
        self.hosts, self.addr, self.folders, self.url, self.env = hosts, addr, folders, url, env
        self.app_hidden, self.root, self.data = app_hidden, root, data
        self.store = RunStore(root / "observer", url)  # what any host reads: the one database

    def on_app(self, name: str, argv: list[str]) -> subprocess.Popen:
        """A command on app server `name`'s host, with the other app server's folder hidden."""
        return self.hosts.popen(name, [PY, "-m", *argv, "--store", str(self.folders[name])],
                                hide=self.app_hidden[name], env=self.env, cwd=PROJECT_ROOT,
                                log=self.root / f"{name}-commands.log")

    def trained_on(self, run_id: str) -> set[str]:
        return {line.message.split()[4] for line in self.store.logs(run_id, 1000)
                if line.message.startswith("training on Dask worker ")}

    def worker_of(self, address: str) -> str:
        return next(name for name in ("w1", "w2") if f"//{self.addr[name]}:" in address)


def test_a_team_on_separate_hosts_shares_one_database_and_nothing_else(team):
    store, data = team.store, str(team.data)
    # two people press Start on the two app servers at once
    starts = [team.on_app(name, ["core.cli.train", *TINY, "--data-dir", data, "--no-wait", "--name", f"start-on-{name}"])
              for name in ("appa", "appb")]
    assert [p.wait(timeout=120) for p in starts] == [0, 0], (team.root / "appa-commands.log").read_text()[-2000:]
    # a 4-trial sweep started on app server B
    sweep = team.on_app("appb", ["core.cli.sweep", *TINY, "--data-dir", data, "--grid", "learning_rate=0.1,0.05",
                                 "--seeds", "2", "--json"])
    wait_for(lambda: len(store.list_runs()) == 6 and all(r.status == "completed" for r in store.list_runs()), 600,
             "both starts and the sweep to complete")
    assert sweep.wait(timeout=60) == 0
    runs = store.list_runs()
    assert sorted(r.name for r in runs if r.name.startswith("start-on-")) == ["start-on-appa", "start-on-appb"]
    workers = set()
    for run in runs:
        where = team.trained_on(run.id)
        assert len(where) == 1, f"{run.name} trained once: {where}"
        workers |= where
        steps = [s.step for s in store.steps(run.id)]
        assert steps == list(range(1, run.total_steps + 1)), f"{run.name}: every step once, in order"
        assert [e.epoch for e in store.epochs(run.id)] == [1, 2]
        assert checkpoint.load(store.file(run.id)).meta["epoch"] == 2, "its checkpoint reaches any host"
    assert {team.worker_of(w) for w in workers} == {"w1", "w2"}, "the sweep spread over both workers"

    # a long run: its live steps read on app server B's host while a worker trains it
    long = team.on_app("appa", ["core.cli.train", "--network", "mlp", "--hidden", "32", "--epochs", "500",
                                "--data-dir", data, "--no-wait", "--name", "long"])
    assert long.wait(timeout=120) == 0
    run_id = next(r.id for r in store.list_runs() if r.name == "long")
    wait_for(lambda: (store.get(run_id).checkpoint_epoch or 0) >= 1, 180, "the long run's first checkpoint")
    seen = _steps_seen_on(team, "appb", run_id)
    assert seen > 0
    wait_for(lambda: _steps_seen_on(team, "appb", run_id) > seen, 30, "B to see the steps as they are taken")
    (worker,) = team.trained_on(run_id)
    killed = team.worker_of(worker)
    for pid in subprocess.run(["ip", "netns", "pids", team.hosts.names[killed]], capture_output=True,
                              text=True).stdout.split():
        os.kill(int(pid), signal.SIGKILL)  # the machine as good as switched off
    t0 = time.monotonic()
    wait_for(lambda: store.get(run_id).status == "interrupted", 10, "the run to be marked interrupted")
    print(f"worker killed -> run interrupted in {time.monotonic() - t0:.1f} s")
    kept = store.get(run_id).checkpoint_epoch
    store.prepare_resume(run_id)
    wait_for(lambda: len(team.trained_on(run_id)) == 2 and store.get(run_id).status == "running"
             and len(store.epochs(run_id)) > kept, 180, "the other worker to resume it")
    assert {team.worker_of(w) for w in team.trained_on(run_id)} == {"w1", "w2"}
    store.request(run_id, "stop")
    wait_for(lambda: store.get(run_id).status == "stopped", 15, "the resumed run to stop")
    epochs = [e.epoch for e in store.epochs(run_id)]
    assert epochs == list(range(1, len(epochs) + 1)), "no epoch lost or repeated across hosts"
    assert any(f"resuming from the checkpoint of epoch {kept}" in line.message for line in store.logs(run_id, 1000))
    # nothing was written where another host would have had to read it
    assert not list(team.folders["appa"].glob("checkpoints/*/*.ckpt")), "app server A trained nothing itself"


def _steps_seen_on(team: Team, host: str, run_id: str) -> int:
    code = (f"from core.runs.store import RunStore; s = RunStore({str(team.folders[host])!r}, {team.url!r}); "
            f"print(s.get({run_id!r}).step)")
    out = team.hosts.run(host, [PY, "-c", code], hide=team.app_hidden[host],
                         env=dict(team.env, PYTHONPATH=str(PROJECT_ROOT)))
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_one_data_parallel_run_over_two_hosts_through_msrun(tmp_path, small_mnist):
    """The several-hosts example of docs/command-line.md on two network namespaces — a real network between the hosts, each
    with the other's store folder hidden: host 0 runs msrun's scheduler and rank 0 and records the run, host 1
    runs rank 1 and joins over TCP at host 0's address (no stand-in for "not the master address" needed: it
    is not host 1's)."""
    hosts = Hosts()
    try:
        addr = [hosts.add("n0"), hosts.add("n1")]
        folders = [tmp_path / "host0", tmp_path / "host1"]
        for folder in folders:
            folder.mkdir()
        env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
        env.pop("STUDIO_DATABASE_URL", None)
        common = ["core.cli.train", "--workers", "2", "--local-workers", "1", "--master-addr", addr[0],
                  "--master-port", "8118", "--epochs", "1", "--network", "mlp", "--data-dir", str(small_mnist)]
        procs = [hosts.popen(f"n{k}", [PY, "-m", *common, "--node-rank", str(k), "--store", str(folders[k])],
                             hide=(folders[1 - k],), log=tmp_path / f"host{k}.out", env=env, cwd=PROJECT_ROOT)
                 for k in (0, 1)]
        codes = [p.wait(timeout=300) for p in procs]
        outs = [(tmp_path / f"host{k}.out").read_text(errors="replace") for k in (0, 1)]
        assert codes == [0, 0], outs
        assert "completed: finished 1 epoch" in outs[0] and "host 0 (node rank 0) records the run" in outs[1]
        logs = [next((folders[k] / "logs").iterdir()) for k in (0, 1)]
        assert (logs[0] / "scheduler.log").exists() and not (logs[1] / "scheduler.log").exists()
        assert (logs[0] / "worker_0.log").exists() and (logs[1] / "worker_1.log").exists()
        for k in (0, 1):
            (run,) = RunStore(folders[k]).list_runs()
            assert run.status == "completed" and [w.rank for w in RunStore(folders[k]).ranks(run.id)] == [k]
    finally:
        hosts.close()
