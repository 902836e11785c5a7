"""Data-parallel training through msrun, with 2 real workers on 127.0.0.1 (loopback only)."""
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from core.model import checkpoint
from core.runs.launch import launcher
from core.config import TrainConfig
from core.runs.worker.cluster import ClusterSpec, free_port
from core.runs.worker.execute import execute
from core.runs.store import RunStore
from core.training.weight_arrays import weights_checksum
from tests.support.apptest import page
from tests.support.helpers import cli, let_pass, small_filesystem, steady, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")


def processes_of(run_id: str) -> list[str]:
    """Command lines of live processes that belong to the run (coordinator, msrun, scheduler, workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if run_id in cmd and state != "Z":
                found.append(cmd)
    return found


def no_processes_left(run_id: str, timeout: float = 20.0) -> None:
    wait_for(lambda: not processes_of(run_id), timeout=timeout, what=f"the processes of {run_id} to end")


def cfg(data, **kw) -> TrainConfig:
    return TrainConfig(**{"network": "lenet5", "epochs": 2, "batch_size": 64, "workers": 2, "optimizer": "adam",
                          "learning_rate": 0.003, "data_dir": str(data),
                          **kw})


def test_two_workers_train_in_both_styles_with_identical_weights(store, small_mnist):
    histories = {}
    for style in ("cell", "functional"):
        run_id = store.create_run(cfg(small_mnist, style=style), source="cli")
        assert execute(store, run_id) == "completed"
        run = store.get(run_id)
        workers = store.ranks(run_id)
        assert [w.rank for w in workers] == [0, 1] and {w.state for w in workers} == {"completed"}
        sums = {w.weights_sha256 for w in workers}
        assert len(sums) == 1 and None not in sums  # every worker ends with the same weights...
        assert sums == {weights_checksum(checkpoint.load(run.checkpoint).net)}  # ...the checkpoint's
        epochs = store.epochs(run_id)
        assert [e.epoch for e in epochs] == [1, 2] and epochs[1].train_loss < epochs[0].train_loss
        assert epochs[1].val_acc > 0.6
        steps = store.steps(run_id)
        assert len(steps) == run.total_steps == 2 * 17  # 1,080 images / 2 workers / 32 per worker, per epoch
        logs = " ".join(line.message for line in store.logs(run_id))
        assert "2 workers × 32 samples per step (global batch 64)" in logs
        assert {"worker_0.log", "worker_1.log", "scheduler.log"} <= {
            p.name for p in (store.logs_dir / run_id).iterdir()}  # every rank's log is kept with the run
        no_processes_left(run_id)
        histories[style] = [v for e in epochs for v in (e.train_loss, e.val_loss)]
    assert histories["cell"] == pytest.approx(histories["functional"], rel=1e-4)  # the same training


def test_stop_from_the_dashboard_ends_every_worker_and_the_run_resumes(store, small_mnist):
    run_id = launcher.start(store, cfg(small_mnist, network="mlp", epochs=40))
    wait_for(lambda: len(ws := store.ranks(run_id)) == 2 and all(w.step >= 20 for w in ws), timeout=90,
             what="both workers to train")
    store.request(run_id, "pause")  # both workers pause, at the same step
    wait_for(lambda: store.get(run_id).status == "paused", timeout=30, what="the pause")
    held = steady(lambda: store.get(run_id).step, 1.5, what="the workers' last step report (every 1 s)")
    let_pass(2.0, "paused workers take no step")
    assert store.get(run_id).step == held
    store.request(run_id, "resume")
    wait_for(lambda: store.get(run_id).step > held + 5, timeout=30, what="training to resume")
    launcher.stop(store, run_id)
    run = wait_for(lambda: (r := store.get(run_id)).status == "stopped" and r, timeout=30, what="the stop")
    # rank 0 records the run's end; each other rank records its own a moment later
    workers = wait_for(lambda: (ws := store.ranks(run_id)) and not any(w.alive_state for w in ws) and ws, 30,
                       "every rank to record its end")
    assert {w.state for w in workers} == {"stopped"}
    assert workers[0].step == workers[1].step  # they stopped together, at the same step
    assert len({w.weights_sha256 for w in workers}) == 1
    no_processes_left(run_id)
    at = page("train")  # the Train page lists each worker
    assert not at.exception, [e.value for e in at.exception]
    assert any("2 data-parallel processes" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert list(table["rank"]) == [0, 1] and set(table["state"]) == {"stopped"}

    assert store.resumable(run) is None
    store.update(run_id, config=run.config.with_(epochs=run.epoch + 1).to_json())  # finish soon
    launcher.resume(store, run_id)
    done = wait_for(lambda: (r := store.get(run_id)).status == "completed" and r, timeout=120, what="the resume")
    assert done.epoch == run.epoch + 1
    resumed = wait_for(lambda: (ws := store.ranks(run_id)) and not any(w.alive_state for w in ws) and ws, 30,
                       "every resumed rank to record its end")  # rank 0 records the run's end first
    assert len({w.weights_sha256 for w in resumed}) == 1
    no_processes_left(run_id)


def test_a_killed_worker_ends_the_run_as_failed_naming_it(store, small_mnist):
    run_id = launcher.start(store, cfg(small_mnist, network="mlp", epochs=40))
    ws = wait_for(lambda: len(w := store.ranks(run_id)) == 2 and all(x.step >= 10 for x in w) and w,
                  timeout=90, what="both workers to train")
    os.kill(ws[1].pid, signal.SIGKILL)
    t = time.monotonic()
    run = wait_for(lambda: (r := store.get(run_id)).status == "failed" and r, timeout=30, what="the failure")
    assert time.monotonic() - t < 15  # well within the cluster time-out
    assert f"worker rank 1 (pid {ws[1].pid}) ended unexpectedly" in run.message
    assert "resume the run" in run.message
    states = {w.rank: w.state for w in store.ranks(run_id)}
    assert states == {0: "stopped", 1: "died"}
    no_processes_left(run_id)
    assert not store.get(run_id).active  # the store stays consistent: nothing left 'running'


def test_a_rank_death_msrun_saw_first_still_fails_the_run_naming_it(store, tmp_path):
    """msrun may see a rank die before the coordinator's watcher does, and stop rank 0 with a signal: rank 0 then
    records the run as stopped (interrupted). The watcher still fails the run, naming the dead rank; when msrun
    won that race the run stayed "stopped" (test_a_killed_worker_ends_the_run_as_failed_naming_it failed now
    and then under load)."""
    import subprocess
    from types import SimpleNamespace

    from core.messages import Message
    from core.runs.worker.distributed import handle_dead_rank
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has: rank 1, killed and reaped by msrun
    run_id = store.create_run(cfg(None), source="cli", status="running")
    store.set_rank(run_id, 0, state="stopped", pid=os.getpid(), host="h", message=Message("interrupted_by_signal"))
    store.set_rank(run_id, 1, state="training", pid=gone.pid, host="h")
    store.finish(run_id, "stopped", Message("interrupted_by_signal"))  # what rank 0 records on msrun's SIGTERM
    assert handle_dead_rank(store, run_id, SimpleNamespace(pid=gone.pid), tmp_path, "h")
    run = store.get(run_id)
    assert run.status == "failed"
    assert f"worker rank 1 (pid {gone.pid}) ended unexpectedly" in run.message and "resume the run" in run.message
    assert "interrupted" in run.message  # what rank 0 said after it
    assert {r.rank: r.state for r in store.ranks(run_id)} == {0: "stopped", 1: "died"}


def test_a_run_a_person_stopped_stays_stopped_when_a_rank_ends_after(store, tmp_path):
    """Only a stop that followed the death is the death's doing: a run stopped by its owner's request stays so."""
    import subprocess
    from types import SimpleNamespace

    from core.messages import Message
    from core.runs.worker.distributed import handle_dead_rank
    gone = subprocess.Popen(["true"])
    gone.wait()
    run_id = store.create_run(cfg(None), source="cli", status="running")
    store.set_rank(run_id, 1, state="training", pid=gone.pid, host="h")
    store.finish(run_id, "stopped", Message("stopped_at", {"step": 12}))
    handle_dead_rank(store, run_id, SimpleNamespace(pid=gone.pid), tmp_path, "h")
    assert store.get(run_id).status == "stopped"


def test_msrun_is_ended_once_every_rank_of_this_host_has_recorded_its_end_and_exited(store):
    """msrun's scheduler looks for ranks leaving the cluster every 5 s: once rank 0 has finished the run and every
    rank, all of them on this host, has recorded its end and exited, the coordinator ends msrun at once. A rank
    still training, still running, of another host, or not yet recorded keeps the 5-s grace."""
    import subprocess

    from core.runs.worker.distributed import ranks_done
    gone = [subprocess.Popen(["true"]) for _ in range(2)]
    for p in gone:
        p.wait()
    run_id = store.create_run(cfg(None), source="cli", status="running")

    def rows(*ranks):
        for rank, state, pid, host in ranks:
            store.set_rank(run_id, rank, state=state, pid=pid, host=host)
        return store.ranks(run_id)

    assert not ranks_done(rows((0, "completed", gone[0].pid, "h")), 2, "h")  # rank 1 not recorded yet
    assert not ranks_done(rows((1, "training", gone[1].pid, "h")), 2, "h")  # rank 1 has not recorded its end
    assert not ranks_done(rows((1, "completed", os.getpid(), "h")), 2, "h")  # ...nor exited
    assert ranks_done(rows((1, "completed", gone[1].pid, "h")), 2, "h")
    assert not ranks_done(rows((1, "completed", gone[1].pid, "other")), 2, "h")  # may still be leaving the cluster


def test_the_ranks_try_to_meet_every_second_unless_the_user_set_intervals():
    from core.runs.worker.cluster import cluster_environment
    env = cluster_environment({"PATH": "/bin"})
    assert env["MS_RETRY_INTERVAL_LOWER"] == env["MS_RETRY_INTERVAL_UPPER"] == "1" and env["PATH"] == "/bin"
    assert cluster_environment({"MS_RETRY_INTERVAL_UPPER": "9"})["MS_RETRY_INTERVAL_UPPER"] == "9"


def test_a_port_in_use_is_refused_with_a_clear_error(store, small_mnist):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = cli("core.cli.train", "--workers", "2", "--epochs", "1", "--data-dir", str(small_mnist),
                "--master-port", str(port), "--store", str(store.root))
    assert r.returncode != 0
    assert f"port {port} on 127.0.0.1 is already in use" in r.stderr and "--master-port" in r.stderr
    run = store.list_runs()[0]
    assert run.status == "failed" and "already in use" in run.message


def test_bad_distributed_settings_are_explained(small_mnist):
    errors = TrainConfig(workers=3, batch_size=64).errors()
    assert "does not split evenly over 3 workers" in errors["batch_size"]
    assert "workers" in TrainConfig(workers=0).errors()
    spec = ClusterSpec(local_workers=1)
    assert "several hosts must agree" in spec.errors(workers=2)["master_port"]
    r = cli("core.cli.train", "--workers", "2", "--local-workers", "3", "--data-dir", str(small_mnist))
    assert r.returncode == 2 and "--local-workers: must be between 1 and the 2 workers" in r.stderr


def test_two_hosts_rehearsed_on_loopback(tmp_path, small_mnist):
    """The several-hosts example of docs/command-line.md, with both 'hosts' on 127.0.0.1: host 0 runs the scheduler and rank 0
    and records the run; host 1 runs rank 1 only. Host 1's processes are told that the master address is not
    theirs (tests/support/second_host/sitecustomize.py), as on a second machine: without that both msruns started a
    scheduler and one failed on the taken port, which the run survived unnoticed. What this proves: the two
    command lines, msrun's cluster over TCP between them, the data split over ranks and the records; what it
    cannot: a real network between machines (latency, firewalls, another Python or MindSpore)."""
    import subprocess
    import sys
    from core import PROJECT_ROOT
    port = str(free_port())
    common = ["--workers", "2", "--local-workers", "1", "--master-port", port, "--epochs", "1", "--network", "mlp",
              "--data-dir", str(small_mnist)]
    second_host = str(Path(__file__).resolve().parents[1] / "support" / "second_host")
    envs = [dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)),
            dict(os.environ, PYTHONPATH=second_host + os.pathsep + str(PROJECT_ROOT))]
    hosts = [subprocess.Popen([sys.executable, "-m", "core.cli.train", *common, "--node-rank", str(k),
                               "--store", str(tmp_path / f"host{k}")], cwd=PROJECT_ROOT, env=envs[k],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in (0, 1)]
    outs = [h.communicate(timeout=180)[0] for h in hosts]
    assert [h.returncode for h in hosts] == [0, 0], outs
    assert "completed: finished 1 epoch" in outs[0]
    assert "host 0 (node rank 0) records the run" in outs[1]
    logs = [next((tmp_path / f"host{k}" / "logs").iterdir()) for k in (0, 1)]
    assert (logs[0] / "scheduler.log").exists() and not (logs[1] / "scheduler.log").exists()  # one scheduler
    assert "ERROR" not in (logs[0] / "scheduler.log").read_text(errors="replace")
    assert "Start scheduler" not in (logs[1] / "msrun.log").read_text(errors="replace")
    assert (logs[0] / "worker_0.log").exists() and (logs[1] / "worker_1.log").exists()  # a rank on each host
    for k in (0, 1):  # each host's store: the run, and the rank that ran there
        (run,) = RunStore(tmp_path / f"host{k}").list_runs()
        assert run.status == "completed" and [w.rank for w in RunStore(tmp_path / f"host{k}").ranks(run.id)] == [k]


def test_a_worker_that_fails_with_its_own_error_names_it_and_ends_the_others(store, small_mnist):
    """Rank 0 cannot write its checkpoint (a real 4 MB tmpfs: one 2.7 MB MLP checkpoint fits, a second copy
    does not): the run fails with rank 0's own message, and rank 1, ended by msrun, is marked stopped."""
    run_id = store.create_run(cfg(small_mnist, network="mlp", epochs=3), source="cli")
    with small_filesystem(store.checkpoint_path(run_id).parent, "4m"):
        assert execute(store, run_id) == "failed"
        run = store.get(run_id)
        assert "could not write the checkpoint of epoch 2" in run.message and "epoch 1 is intact" in run.message
        states = {w.rank: w.state for w in store.ranks(run_id)}
        assert states == {0: "failed", 1: "stopped"}
        assert "rank 0 failed" in store.ranks(run_id)[1].message
        no_processes_left(run_id)
