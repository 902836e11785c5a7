"""Faults: a killed worker, resume from a checkpoint, a full disk, an unwritable store, double requests.
Real worker processes, a real SQLite store, real MNIST."""
from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from core.model import checkpoint
from core.runs.launch import launcher
from core.config import TrainConfig
from core.runs.worker.execute import execute
from core.runs.store import RunStore
from core.runs.store.database import dispose
from tests.support.helpers import cli, let_pass, small_filesystem, wait_for


@pytest.fixture
def mlp_config(small_mnist):
    # 1,080 training images / 64 = 17 steps per epoch; fast in PyNative mode
    return TrainConfig(network="mlp", mode="pynative", epochs=12, batch_size=64, data_dir=str(small_mnist))


def test_killed_worker_is_marked_interrupted_then_resumes_from_its_checkpoint(store, mlp_config):
    run_id = launcher.start(store, mlp_config)
    # the epoch's metrics are written just before its checkpoint: wait for both before killing
    wait_for(lambda: store.get(run_id).checkpoint and len(store.epochs(run_id)) >= 1, what="one checkpointed epoch")
    pid = store.get(run_id).pid
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    wait_for(lambda: store.active_run() is None, timeout=10, what="the store to notice")  # reconcile runs here
    assert time.monotonic() - killed < 5
    run = store.get(run_id)
    assert run.status == "interrupted" and "ended unexpectedly" in run.message and os.path.exists(run.checkpoint)
    kept_epochs = len(store.epochs(run_id))
    assert kept_epochs >= 1 and len(store.steps(run_id)) >= 17

    # a new run can start, and the interrupted one, resumed while it trains, waits in the queue for it
    second = launcher.start(store, mlp_config.with_(epochs=1))
    launcher.resume(store, run_id)
    assert store.get(run_id).status == "queued"
    dispatcher = launcher.dispatcher_for(store)  # what the app server's thread does, here in the test
    wait_for(lambda: dispatcher.tick() or store.get(second).status == "completed", timeout=60, what="second run")
    done = wait_for(lambda: dispatcher.tick() or ((r := store.get(run_id)).status in ("completed", "failed") and r),
                    timeout=120, what="the resumed run")
    assert done.status == "completed", done.message
    epochs = [e.epoch for e in store.epochs(run_id)]
    assert epochs == list(range(1, 13))
    steps = [s.step for s in store.steps(run_id)]
    assert steps == list(range(1, 12 * 17 + 1))  # the unfinished epoch's records were replaced, none twice
    assert done.step == 12 * 17
    assert checkpoint.load(done.checkpoint).meta["epoch"] == 12
    log = " ".join(line.message for line in store.logs(run_id))
    assert "marked interrupted" in log and "resuming from the checkpoint of epoch" in log
    assert done.best_val_acc is not None and done.best_val_acc > 0.8


def test_resume_refuses_what_it_cannot_resume(store, mlp_config, tmp_path):
    finished = store.create_run(mlp_config, name="done")
    store.finish(finished, "completed")
    p = cli("core.cli.train", "--resume", finished, "--store", str(store.root))
    assert p.returncode == 2 and "a completed run cannot be resumed" in p.stderr
    never = store.create_run(mlp_config, name="no checkpoint")
    store.finish(never, "interrupted")
    p = cli("core.cli.train", "--resume", never, "--store", str(store.root))
    assert p.returncode == 2 and "no checkpoint to resume from" in p.stderr
    p = cli("core.cli.train", "--resume", "../../etc", "--store", str(store.root))
    assert p.returncode == 2 and "is not a run id" in p.stderr
    diverged = store.create_run(mlp_config, name="boom")
    store.finish(diverged, "diverged")
    with pytest.raises(ValueError, match="lower learning rate"):
        store.prepare_resume(diverged)


def test_disk_full_while_checkpointing_keeps_the_previous_checkpoint(store, mlp_config, tmp_path):
    """A real full disk: a 4 MB tmpfs, where one 2.7 MB MLP checkpoint fits and a second copy does not, so the
    kernel itself answers ENOSPC (skipped, saying so, where mounting is not allowed; never faked)."""
    config = mlp_config.with_(epochs=3)
    run_id = store.create_run(config, source="cli")
    folder = store.checkpoint_path(run_id).parent
    with small_filesystem(folder, "4m"):
        with pytest.raises(OSError, match="No space left on device"):
            execute(store, run_id)
        run = store.get(run_id)
        assert run.status == "failed"
        assert "could not write the checkpoint of epoch 2" in run.message
        assert "the checkpoint of epoch 1 is intact" in run.message and "resume" in run.message
        assert checkpoint.load(store.checkpoint_path(run_id)).meta["epoch"] == 1
        assert sorted(p.name for p in folder.iterdir()) == ["model.ckpt"]  # no half-written file left
        saved = tmp_path / "model.ckpt"
        shutil.copyfile(store.checkpoint_path(run_id), saved)
    # space freed: resume finishes the run from epoch 1's checkpoint
    shutil.copyfile(saved, store.checkpoint_path(run_id))
    store.prepare_resume(run_id)
    assert execute(store, run_id) == "completed"
    assert [e.epoch for e in store.epochs(run_id)] == [1, 2, 3]


def test_an_unwritable_data_directory_gets_a_message(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match="Cannot create the run store .* Set STUDIO_DATA_DIR"):
        RunStore(blocker / "runs")
    p = cli("core.cli.train", "--epochs", "1", "--store", str(blocker / "runs"))
    assert p.returncode != 0 and "Cannot create the run store" in p.stderr


def test_stop_twice_and_pause_after_the_end(store, mlp_config):
    run_id = launcher.start(store, mlp_config.with_(epochs=200, batch_size=16))
    wait_for(lambda: store.get(run_id).step > 3, what="first steps")
    assert str(launcher.stop(store, run_id)) == "Stop requested."
    assert str(launcher.stop(store, run_id)).startswith("Stop was already requested")
    run = wait_for(lambda: (r := store.get(run_id)).status == "stopped" and r, timeout=30, what="stop")
    wait_for(lambda: not launcher.pid_alive(run.pid), timeout=15, what="the worker to exit")
    assert "already finished (stopped); nothing to pause" in str(store.request(run_id, "pause"))
    assert "nothing to stop" in str(launcher.stop(store, run_id))
    assert store.get(run_id).status == "stopped"


def test_divergence_after_a_good_epoch_keeps_that_epochs_checkpoint(store, mlp_config, monkeypatch):
    """The loss turns NaN in epoch 2 (injected into the real train step's output): the run ends as diverged
    with the step, and epoch 1's checkpoint is what remains."""
    import mindspore as ms

    from core.training import build
    real = build.make_train_step

    def poisoned(config, net, loss_fn, optimizer, parallel=None, steps_per_epoch=1, compiled_ahead=False):
        step, calls = real(config, net, loss_fn, optimizer, parallel, steps_per_epoch, compiled_ahead), {"n": 0}

        def run(data, label):
            loss, logits = step(data, label)
            calls["n"] += 1
            return (ms.Tensor(float("nan")) if calls["n"] >= 20 else loss), logits
        return run

    monkeypatch.setattr(build, "make_train_step", poisoned)
    run_id = store.create_run(mlp_config.with_(epochs=3), source="cli")
    assert execute(store, run_id) == "diverged"
    run = store.get(run_id)
    assert run.status == "diverged" and "at step 20 (epoch 2)" in run.message and "Lower the learning rate" in run.message
    assert checkpoint.load(run.checkpoint).meta["epoch"] == 1
    assert store.resumable(run) is not None  # diverged runs are not resumed with the same settings


def test_a_full_disk_under_the_store_is_said_by_the_command_lines_that_queue(tmp_path, small_mnist):
    """core.cli.train --no-wait and core.cli.sweep on a store whose disk is full (a real 2 MB tmpfs, filled): exit 2
    with what to do, no traceback, and nothing half-queued."""
    folder = tmp_path / "store"
    with small_filesystem(folder, "2m"):
        RunStore(folder)  # the store exists (migrated) before the disk fills
        filler = folder / "filler"
        with open(filler, "wb", buffering=0) as f:  # unbuffered: a chunk the full disk refused is not kept to
            try:                                     # be written again, and refused again, when the file closes
                while True:
                    f.write(b"\0" * 65536)
            except OSError:
                pass  # the disk is full
        for argv in (["core.cli.train", "--network", "mlp", "--data-dir", str(small_mnist), "--no-wait"],
                     ["core.cli.sweep", "--network", "mlp", "--data-dir", str(small_mnist), "--grid",
                      "learning_rate=0.1,0.05"]):
            p = cli(*argv, "--store", str(folder))
            assert p.returncode == 2, (argv[0], p.stdout, p.stderr)
            assert "disk is full or failing" in p.stderr and "Traceback" not in p.stderr, (argv[0], p.stderr)
        filler.unlink()
        store = RunStore(folder)
        assert store.list_runs() == [], "nothing half-queued"
        dispose(store.url)  # this process's pooled connections hold the file open: the disk would stay busy


def test_a_lasting_dispatcher_failure_is_said_once_not_every_tick(store, monkeypatch, caplog):
    """A locked or full database makes every tick fail: the dispatcher says so once (again after REPEAT_S while
    it lasts) and keeps trying, instead of a line every half second."""
    import logging

    from core.runs.launch import dispatcher as dispatching

    def failing_tick(self):
        raise OSError("database or disk is full")

    monkeypatch.setattr(dispatching.Dispatcher, "tick", failing_tick)
    monkeypatch.setattr(dispatching, "TICK_S", 0.05)
    caplog.set_level(logging.WARNING, logger="core.runs.launch.dispatcher")
    thread, stop = dispatching.Dispatcher(store, spawn=lambda s, r: None, name="test").start_thread()
    let_pass(1.0, "some 20 ticks, each failing")
    stop.set()
    thread.join(10)
    said = [r.getMessage() for r in caplog.records if "database or disk is full" in r.getMessage()]
    assert said == ["dispatcher test: OSError: database or disk is full (retrying every tick)"]
