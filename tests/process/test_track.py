"""Scripts of their own in the studio (core.track): the tutorial-style scripts in examples/, with their two or
four added lines, record their runs into a store — live steps, epochs, settings, a checkpoint, how they ended —
and the studio's Stop and Pause reach a script that asks run.should_stop()."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from core import PROJECT_ROOT
from core.runs.rows import EXTERNAL
from core.runs.run_queue import RunQueue
from core.config import TrainConfig
from core.track import studio_config, track_run
from tests.support.apptest import page
from tests.support.helpers import let_pass, steady, wait_for

BOTH_DATABASES = True


def script(name: str, store, data, *args: str) -> subprocess.Popen:
    """One of examples/ started as its user would, on the test's store (a folder, or the database URL)."""
    where = store.url if store.shares_database else str(store.root)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the script finds the project itself (sys.path), as from a fresh shell
    return subprocess.Popen([sys.executable, str(PROJECT_ROOT / "examples" / name), "--data", str(data / "train"),
                             "--store", where, *args], cwd=PROJECT_ROOT.parent, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finished(proc: subprocess.Popen, timeout: float = 300) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def test_the_model_train_tutorial_with_studio_callback_records_every_step_epoch_and_its_checkpoint(store, small_mnist):
    finished(script("lenet5_model_train.py", store, small_mnist, "--epochs", "2", "--name", "tutorial"))
    (run,) = store.list_runs()
    assert (run.name, run.source, run.status, run.external) == ("tutorial", EXTERNAL, "completed", True)
    steps = store.steps(run.id)
    per_epoch = 1200 // 32  # the tutorial drops the last, partial batch
    assert [s.step for s in steps] == list(range(1, 2 * per_epoch + 1)) and run.total_steps == 2 * per_epoch
    assert all(s.loss is not None and s.loss > 0 for s in steps)
    assert run.samples_per_s and run.samples_per_s > 0  # from the dataset's batch size and the steps' times
    epochs = store.epochs(run.id)
    assert [e.epoch for e in epochs] == [1, 2] and epochs[1].train_loss < steps[0].loss  # it learned
    assert run.params == {"epochs": 2, "network": "lenet5", "lr": 0.01, "momentum": 0.9, "batch_size": 32}
    assert (run.config.network, run.config.learning_rate, run.config.epochs) == ("lenet5", 0.01, 2)
    assert store.has_file(run.id)  # a network of its own: kept, not offered to Evaluate or Draw
    assert run.checkpoint is None
    assert store.resumable(run) is not None and "script" in str(store.resumable(run))


def test_a_value_and_grad_loop_with_track_run_records_its_run_and_stops_and_pauses_when_the_studio_asks(
        store, small_mnist):
    proc = script("mlp_value_and_grad.py", store, small_mnist, "--epochs", "200", "--name", "loop")
    try:
        run = wait_for(lambda: next((r for r in store.list_runs() if r.step >= 30), None), timeout=120,
                       what="the loop's steps in the store")
        assert (run.status, run.external, run.total_steps, run.eta) == ("running", True, 0, None)
        store.request(run.id, "pause")
        wait_for(lambda: store.get(run.id).status == "paused", timeout=30, what="the script to pause")
        held = steady(lambda: store.get(run.id).step, 0.5, what="the paused script's last step report")
        let_pass(1.5, "a paused script takes no steps")
        assert store.get(run.id).step == held, "a paused script takes no steps"
        store.request(run.id, "resume")
        wait_for(lambda: store.get(run.id).step > held, timeout=30, what="steps after resuming")
        store.request(run.id, "stop")
        out = finished(proc, timeout=120)
    finally:
        proc.kill()
    run = store.get(run.id)
    assert run.status == "stopped" and f"step {run.step}" in run.message, (run.status, run.message)
    assert "epoch 1: loss" in out and run.epoch >= 1
    assert out.count(f"[studio] run {run.id}: stop asked from the studio at step") == 1, out[-1500:]  # said once
    assert run.params["lr"] == 0.05 and run.params["epochs"] == 200


def test_a_script_that_fails_or_is_killed_is_said_so_and_takes_no_queue_slot(store, small_mnist):
    with pytest.raises(ZeroDivisionError), track_run(name="broken", config={"learning_rate": 0.1},
                                                     store=store) as tracked:
        tracked.log_step(2.5)
        tracked.log_step(2.5 / 0)
    broken = store.get(tracked.id)
    assert broken.status == "failed" and broken.message == "the script failed: ZeroDivisionError: float division by zero"
    proc = script("mlp_value_and_grad.py", store, small_mnist, "--epochs", "200", "--name", "killed")
    try:
        run = wait_for(lambda: next((r for r in store.list_runs() if r.name == "killed" and r.step), None),
                       timeout=120, what="the script's first steps")
        queued = RunQueue(store, slots=1).submit(TrainConfig(network="mlp", epochs=1), name="studio's own",
                                                 source="dashboard", submitter="ann")
        assert RunQueue(store, slots=1).claim_next().id == queued  # the script's run holds no slot
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert store.reconcile() == [run.id] and store.get(run.id).status == "interrupted"


def test_a_scripts_settings_fill_the_studios_config_where_they_name_its_fields_with_values_it_accepts():
    config = studio_config({"lr": 0.3, "batch": 128, "network": "resnet50", "epochs": -1, "optimizer": "adam",
                            "hidden": [64, 32], "data_dir": "/etc", "anything": object()})
    assert (config.learning_rate, config.batch_size, config.optimizer, config.hidden) == (0.3, 128, "adam", (64, 32))
    assert config.network == TrainConfig().network and config.epochs == TrainConfig().epochs  # refused values
    assert config.data_dir == TrainConfig().data_dir


def test_the_train_and_runs_pages_show_an_external_run_as_a_script_of_its_own(store):
    with track_run(name="notebook", config={"network": "my-cnn", "lr": 0.02}, store=store) as tracked:
        for _ in range(3):
            tracked.log_step(1.0)
        at = page("train")
        shown = " ".join(i.value for i in at.info)
        assert "A script of its own records this run" in shown and "run.should_stop()" in shown
        assert not [b for b in at.button if "Step" in b.label], "no lesson controls for a script's run"
        assert [b for b in at.button if "Stop" in b.label], "Stop is offered: the script asks should_stop()"
    runs_page = page("runs")
    assert "my-cnn" in runs_page.dataframe[0].value["network"].tolist()
    settings = runs_page.dataframe[1].value
    assert dict(zip(settings.iloc[:, 0], settings.iloc[:, 1], strict=True)) == {"network": "my-cnn", "lr": "0.02"}
    assert any("did not train this run" in c.value for c in runs_page.caption)


def test_each_examples_help_says_its_whole_first_paragraph():
    for name, ending in (("lenet5_model_train.py", "(docs/track.md)."), ("mlp_value_and_grad.py", "(docs/track.md)."),
                         ("lenet5_summary_collector.py", "so that the two can be compared.")):
        out = subprocess.run([sys.executable, str(PROJECT_ROOT / "examples" / name), "--help"], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert ending in " ".join(out.stdout.split()), (name, out.stdout)
