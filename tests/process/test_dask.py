"""More machines through Dask: a scheduler and two workers on 127.0.0.1, MindSpore in its own process per run.
A 4-trial sweep spread over both workers with everything recorded in the app's store; pause, resume and stop
reaching a remote run, and its resume from its checkpoint; a worker killed mid-run marked interrupted within
10 s, its training process gone with it, and the run resumed on the other worker. On SQLite the runs come back
through the relay; on PostgreSQL the workers record into the database themselves."""
from __future__ import annotations

import os
import shutil
import time

import pytest

from core.config import TrainConfig
from core.model import checkpoint
from core.runs import sweeps
from core.runs.rows import ACTIVE
from core.runs.launch.dask_executor import DaskExecutor
from core.runs.run_queue import RunQueue
from core.runs.launch.dask_local import Cluster
from tests.support.dask_cluster import dispatching, processes_of, trained_on, wait_until_gone
from tests.support.helpers import let_pass, wait_for

BOTH_DATABASES = True  # the relay (SQLite) and the workers writing to the team's database (PostgreSQL)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One cluster for the module's tests that leave its workers as they found them (its scheduler and two
    workers, with their nannies, are ~7 CPU-seconds to start on two cores); a worker killed needs its own."""
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.close()


@pytest.fixture
def own_cluster(tmp_path):
    c = Cluster(tmp_path / "dask")
    yield c
    c.close()


def long_run(small_mnist) -> TrainConfig:
    """An MLP run that takes minutes unless stopped (each epoch sends a checkpoint back)."""
    return TrainConfig(network="mlp", hidden=(32,), epochs=500, data_dir=str(small_mnist))


def test_a_folder_is_scattered_once_and_kept_while_runs_come_and_go(cluster, small_mnist, tmp_path):
    """Runs one after another on one folder share its files on the cluster, held between runs: a task that
    needs them always finds them (a hashed key scattered again just after its release was forgotten, and a
    sweep's trial lost: dask/distributed#8576). A folder whose files changed is sent again."""
    executor = DaskExecutor(cluster.address)
    try:
        client = executor.client()
        key = executor.data.future(client, str(small_mnist)).key
        for _ in range(50):  # each run's reference is gone before the next one asks
            data = executor.data.future(client, str(small_mnist))
            assert data.key == key
            assert client.submit(len, data, pure=False).result(timeout=30) == 4, "train and test, images and labels"
            del data
        changed = tmp_path / "changed"
        shutil.copytree(small_mnist, changed)
        copied = executor.data.future(client, str(changed)).key
        assert copied != key
        os.utime(next((changed / "train").iterdir()), ns=(0, 0))
        replaced = executor.data.future(client, str(changed)).key
        assert replaced not in (key, copied) and executor.data.future(client, str(changed)).key == replaced
    finally:
        executor.close()


def test_a_four_trial_sweep_spreads_over_both_workers_and_everything_comes_back(cluster, store, small_mnist):
    spec = sweeps.SweepSpec(TrainConfig(network="mlp", hidden=(32,), epochs=2, data_dir=str(small_mnist)),
                            (sweeps.parse_space("learning_rate=0.1,0.05"),), "grid", seeds=2)
    sweep_id = sweeps.create(store, spec, submitter="ann")
    with dispatching(store, cluster.address):
        wait_for(lambda: len(store.list_runs()) == 4 and all(r.status not in (*ACTIVE, "queued")
                                                             for r in store.list_runs()), 300, "the sweep to end")
    runs = store.list_runs()
    assert [r.status for r in runs] == ["completed"] * 4, [(r.status, r.message) for r in runs]
    assert {trained_on(store, r.id) for r in runs} == set(cluster.workers), "both workers trained"
    for run in runs:
        assert run.executor.startswith("dask:")
        assert [e.epoch for e in store.epochs(run.id)] == [1, 2]
        assert run.step == run.total_steps == len(store.steps(run.id)) > 0, "every step's loss came back"
        assert 0.5 < run.best_val_acc <= 1
        assert run.checkpoint_epoch == 2 and "studio-remote" not in run.message, "paths say where they are here"
        assert checkpoint.load(store.file(run.id)).meta["epoch"] == 2, "the final weights reach this host"
        assert any(line.message.startswith("epoch 2:") for line in store.logs(run.id))
        if store.shares_database:
            assert "kept in the team's database" in run.message and str(store.file(run.id)) != run.checkpoint
            assert run.pid and run.host, "the worker process recorded itself, where it runs"
        else:
            assert run.checkpoint == str(store.checkpoint_path(run.id)) and str(store.root) in run.message
            assert run.pid is None, "the relay sends no pid: it would mean nothing here"
            assert store.log_path(run.id).read_bytes(), "the remote worker process's own output came back"
    settings = sweeps.settings(store, next(s for s in sweeps.list_sweeps(store) if s.id == sweep_id))
    assert len(settings) == 2 and all(len(s.accuracies) == 2 for s in settings)
    same_seed = {}
    for r in runs:  # one setting and seed trained on either worker gives one result: runs are reproducible there
        same_seed.setdefault((r.config.learning_rate, r.config.seed), []).append(r.best_val_acc)
    assert len(same_seed) == 4


def test_pause_resume_and_stop_reach_a_remote_run_which_resumes_from_the_checkpoint_it_sent(cluster, store,
                                                                                              small_mnist):
    run_id = RunQueue(store, slots=0).submit(long_run(small_mnist), "remote", "test", "ann")
    with dispatching(store, cluster.address):
        wait_for(lambda: (store.get(run_id).checkpoint_epoch or 0) >= 1, 120, "a first checkpoint to come back")
        store.request(run_id, "pause")
        # Requests reach a remote run through the relay (core/runs/worker/remote_run.py, every 0.25 s) and take
        # effect at a step's end; the waits allow for a loaded 2-core machine (a 5 s wait for the pause ran out
        # once in a clean-clone CI here). The stop keeps its bound: past its 5 s grace the process is ended.
        wait_for(lambda: store.get(run_id).status == "paused", 30, "the remote run to pause")
        held = store.get(run_id).step
        let_pass(1.5, "a paused remote run takes no step")
        assert store.get(run_id).step == held, "paused: no step taken"
        assert store.ask(run_id, "momentum", 0.5).code == "requested"  # a live setting travels as the others do
        store.request(run_id, "resume")
        wait_for(lambda: store.get(run_id).status == "running" and store.get(run_id).step > held, 30, "it to go on")
        wait_for(lambda: [(c.setting, c.value) for c in store.setting_changes(run_id)] == [("momentum", 0.5)], 30,
                 "the remote run's momentum change to come back")
        assert store.setting_changes(run_id)[0].step > held and store.requests(run_id).asked == {}
        t0 = time.monotonic()
        store.request(run_id, "stop")
        wait_for(lambda: store.get(run_id).status == "stopped", 8, "the remote run to stop")
        assert time.monotonic() - t0 < 8
        stopped = store.get(run_id)
        assert store.resumable(stopped) is None, "stopped with a checkpoint here"
        saved = checkpoint.load(store.file(run_id)).meta["epoch"]
        assert saved == stopped.checkpoint_epoch >= 1

        store.prepare_resume(run_id)
        wait_for(lambda: any("resuming from the checkpoint of epoch" in line.message for line in store.logs(run_id)),
                 120, "the resumed run to start remotely")
        wait_for(lambda: len(store.epochs(run_id)) > saved, 60, "an epoch after the checkpoint")
        store.request(run_id, "stop")
        wait_for(lambda: store.get(run_id).status == "stopped", 10, "the resumed run to stop")
    epochs = [e.epoch for e in store.epochs(run_id)]
    assert epochs == list(range(1, len(epochs) + 1)), "no epoch lost or repeated across the resume"
    assert f"resuming from the checkpoint of epoch {saved}" in " ".join(line.message for line in store.logs(run_id))


def test_a_killed_worker_marks_its_run_interrupted_within_10_s_and_the_other_worker_resumes_it(own_cluster, store,
                                                                                                small_mnist):
    cluster = own_cluster
    run_id = RunQueue(store, slots=0).submit(long_run(small_mnist), "remote", "test", "ann")
    with dispatching(store, cluster.address):
        wait_for(lambda: (store.get(run_id).checkpoint_epoch or 0) >= 1, 120, "a first checkpoint to come back")
        worker = trained_on(store, run_id)
        assert processes_of(run_id), "its training process runs (on this machine, in the test)"
        cluster.kill_worker(worker)
        t0 = time.monotonic()
        wait_for(lambda: store.get(run_id).status == "interrupted", 10, "the run to be marked interrupted")
        took = time.monotonic() - t0
        run = store.get(run_id)
        assert run.said.key in ("remote_worker_died", "remote_silent"), run.message
        wait_until_gone(run_id, 10)  # its training process died with the worker: nothing trains on unseen
        assert store.resumable(run) is None, "resumable from the last checkpoint it sent"
        kept = run.checkpoint_epoch

        store.prepare_resume(run_id)
        wait_for(lambda: trained_on(store, run_id) != worker and store.get(run_id).status == "running"
                 and len(store.epochs(run_id)) > kept, 120, "the other worker to go on with it")
        assert set(cluster.workers) == {trained_on(store, run_id)}
        store.request(run_id, "stop")
        wait_for(lambda: store.get(run_id).status == "stopped", 10, "the resumed run to stop")
    print(f"worker killed -> run interrupted in {took:.1f} s")
