"""The command line and the worker process, as separate OS processes on real data."""
import os

import pytest

from core.runs.launch import launcher
from core.config import TrainConfig
from tests.support.helpers import cli, let_pass, steady, wait_for


def test_cli_trains_records_the_run_and_evaluate_reports(tmp_path, small_mnist, store):
    out = tmp_path / "mlp.ckpt"
    p = cli("core.cli.train", "--network", "mlp", "--epochs", "2", "--data-dir", str(small_mnist),
            "--store", str(store.root), "--out", str(out), "--name", "from-cli")
    assert p.returncode == 0, p.stderr
    assert "epoch   2" in p.stdout and "ETA" in p.stderr and out.exists()
    (run,) = store.list_runs()
    assert (run.name, run.source, run.status) == ("from-cli", "cli", "completed")
    assert len(store.epochs(run.id)) == 2 and store.steps(run.id)[-1].step == run.step == 2 * 17
    e = cli("core.cli.evaluate", str(out), "--data-dir", str(small_mnist))
    assert e.returncode == 0, e.stderr
    assert "(test, 500 images)" in e.stdout and "accuracy 0." in e.stdout and "confusion matrix" in e.stdout


def test_cli_refuses_bad_input_with_messages(tmp_path, store):
    p = cli("core.cli.train", "--learning-rate", "abc", "--epochs", "0", "--store", str(store.root))
    assert p.returncode == 2
    assert "--learning-rate: 'abc' is not a valid float" in p.stderr
    p = cli("core.cli.train", "--epochs", "0", "--store", str(store.root))
    assert p.returncode == 2 and "--epochs: must be ≥ 1" in p.stderr
    p = cli("core.cli.train", "--data-dir", str(tmp_path / "nowhere"), "--store", str(store.root))
    assert p.returncode == 2 and "does not exist" in p.stderr
    assert store.list_runs() == []
    (tmp_path / "x.ckpt").write_bytes(b"junk")
    p = cli("core.cli.evaluate", str(tmp_path / "x.ckpt"))
    assert p.returncode == 1 and "not a readable MindSpore checkpoint" in p.stderr


@pytest.fixture
def long_config(small_mnist):
    return TrainConfig(network="mlp", mode="pynative", epochs=200, batch_size=16, data_dir=str(small_mnist))


def test_worker_pause_resume_stop(store, long_config):
    run_id = launcher.start(store, long_config)
    wait_for(lambda: store.get(run_id).step > 5, what="first steps")
    store.request(run_id, "pause")
    wait_for(lambda: store.get(run_id).status == "paused", what="paused status")
    frozen = steady(lambda: store.get(run_id).step, 0.8, what="the paused worker's last step report")
    let_pass(0.8, "a paused worker takes no step")
    assert store.get(run_id).step == frozen
    store.request(run_id, "resume")
    wait_for(lambda: store.get(run_id).step > frozen + 3, what="training to continue")
    assert store.get(run_id).status == "running"
    launcher.stop(store, run_id)
    run = wait_for(lambda: (r := store.get(run_id)).status in ("stopped",) and r, timeout=30, what="stop")
    assert "stopped by request" in run.message
    assert os.path.exists(run.checkpoint)
    wait_for(lambda: not launcher.pid_alive(run.pid), timeout=15, what="the worker to exit")


def test_cli_starts_from_a_run_of_the_store_by_its_id_and_refuses_an_unknown_one(with_run, small_mnist):
    store, base_id = with_run
    p = cli("core.cli.train", "--network", "mlp", "--epochs", "1", "--data-dir", str(small_mnist), "--store",
            str(store.root), "--init-checkpoint", "run:no-such-run", "--no-wait")
    assert p.returncode == 2 and "run no-such-run" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert [r.id for r in store.list_runs()] == [base_id], "nothing was queued"
    p = cli("core.cli.train", "--network", "mlp", "--epochs", "1", "--data-dir", str(small_mnist), "--store",
            str(store.root), "--init-checkpoint", f"run:{base_id}", "--name", "from-a-run")
    assert p.returncode == 0, p.stderr
    tuned = next(r for r in store.list_runs() if r.name == "from-a-run")
    assert tuned.status == "completed" and tuned.config.init_checkpoint == f"run:{base_id}"
    first_loss = store.steps(tuned.id)[0].loss
    assert first_loss < 1.8, f"the first step's loss {first_loss:.2f} is a random start's (ln 10 = 2.30)"
