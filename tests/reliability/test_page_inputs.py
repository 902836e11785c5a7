"""Bad input met through the pages (AppTest): a store folder that cannot be used, a huge run history,
a run whose checkpoint vanished, a stopped run resumed from the Train page."""
from __future__ import annotations

import os

import numpy as np
import pytest

from core.app import model_service
from core.app.throttle import Throttle
from core.model import checkpoint
from core.config import TrainConfig
from tests.support.apptest import page, seen
from tests.support.helpers import wait_for


def test_an_unusable_store_folder_is_explained_on_every_page(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("STUDIO_DATA_DIR", str(blocker / "runs"))
    for name in ("train", "runs"):
        at = page(name)
        assert not at.exception, [e.value for e in at.exception]
        assert any("Cannot create the run store" in seen(e.value) and "STUDIO_DATA_DIR" in seen(e.value)
                   for e in at.error)


def test_a_long_run_keeps_the_train_page_small(store):
    run_id = store.create_run(TrainConfig(epochs=1000), source="cli")
    for start in range(1, 100_001, 10_000):
        store.add_steps(run_id, [(s, 1 + s // 100, 1.0 / s, s * 0.01) for s in range(start, start + 10_000)],
                        step=start + 9_999)
    store.finish(run_id, "stopped")
    rows = store.steps(run_id, max_points=1500)
    assert len(rows) <= 1501 and rows[-1].step == 100_000
    at = page("train")
    assert not at.exception, [e.value for e in at.exception]
    chart = next(c for c in at.get("plotly_chart"))
    assert len(chart.proto.spec) < 400_000  # 100,000 steps would be ~5 MB of JSON


def test_a_deleted_checkpoint_is_reported_on_evaluate_and_draw_opens_without_error(with_run):
    """Under AppTest the canvas is always empty, so Draw never predicts here: the prediction with a deleted
    checkpoint is tested where a stroke can be drawn, in tests/browser/test_browser_actions.py."""
    store, run_id = with_run
    os.remove(store.get(run_id).checkpoint)
    at = page("evaluate")
    assert not at.exception, [e.value for e in at.exception]
    assert any("no longer exists on disk" in e.value for e in at.error)
    at = page("draw")
    assert not at.exception, [e.value for e in at.exception]
    assert any("canvas is empty" in i.value for i in at.info)


def test_a_stopped_run_resumes_from_the_train_page(store, small_mnist):
    config = TrainConfig(network="mlp", mode="pynative", epochs=30, batch_size=64, data_dir=str(small_mnist))
    at = page("train")
    at.session_state["config"] = config
    at.run()
    at.button[0].click().run()  # Start
    (run,) = store.list_runs()
    wait_for(lambda: store.get(run.id).checkpoint and store.get(run.id).epoch >= 2, what="two epochs")
    at.run()
    next(b for b in at.button if "Stop" in b.label).click().run()
    wait_for(lambda: store.get(run.id).status == "stopped", timeout=30, what="stop")
    at.run()
    resume = next(b for b in at.button if "Resume from checkpoint" in b.label)
    assert not resume.disabled
    resume.click().run()
    assert not at.exception, [e.value for e in at.exception]
    done = wait_for(lambda: (r := store.get(run.id)).status in ("completed", "failed") and r, timeout=120,
                    what="the resumed run to finish")
    assert done.status == "completed" and [e.epoch for e in store.epochs(run.id)] == list(range(1, 31))


def test_configure_refuses_invalid_values_at_the_field(store):
    at = page("configure")
    at.text_input(key="cfg_learning_rate").input("fast").run()
    at.text_input(key="cfg_batch_size").input("0").run()
    errors = [e.value for e in at.error]
    assert any("'fast' is not a valid float" in e for e in errors)
    assert any("must be ≥ 1" in e for e in errors)
    assert at.session_state["config"] == TrainConfig()  # the last valid config stays


def test_patience_is_editable_only_with_early_stopping(store):
    at = page("configure")
    assert at.text_input(key="cfg_patience").disabled
    at.checkbox(key="cfg_early_stopping").check().run()
    assert not at.text_input(key="cfg_patience").disabled
    at.text_input(key="cfg_patience").input("5").run()
    assert at.session_state["config"].patience == 5 and at.session_state["config"].early_stopping


def test_a_link_reproduces_a_config_and_bad_link_values_are_reported(store):
    at = page("configure", {"network": "mlp", "epochs": "3", "optimizer": "lion", "learning_rate": "nan",
                            "colour": "red"})
    cfg = at.session_state["config"]
    assert (cfg.network, cfg.epochs, cfg.optimizer, cfg.learning_rate) == ("mlp", 3, "momentum", 0.01)
    warnings = " ".join(seen(w.value) for w in at.warning)
    assert "optimizer" in warnings and "learning_rate" in warnings and "colour" in warnings


def test_uploaded_checkpoints_are_validated(store, trained_ckpt):
    with pytest.raises(checkpoint.CheckpointError, match="not a readable"):
        model_service.import_checkpoint(store, b"not a checkpoint at all", "x.ckpt")
    with pytest.raises(checkpoint.CheckpointError, match="is empty"):
        model_service.import_checkpoint(store, b"", "x.ckpt")
    assert store.list_runs() == [] and [p.name for p in store.root.iterdir() if p.suffix == ".ckpt"] == []
    run_id = model_service.import_checkpoint(store, trained_ckpt.read_bytes(), "good.ckpt")
    run = store.get(run_id)
    assert run.status == "completed" and run.source == "upload" and run.config.network == "mlp"
    probs = model_service.predict(run.checkpoint, __import__("numpy").zeros((2, 28, 28), "uint8"))
    assert probs.shape == (2, 10)


def test_an_upload_is_named_by_the_users_file_and_non_finite_weights_are_refused(store, trained_ckpt, tmp_path):
    with pytest.raises(checkpoint.CheckpointError) as e:
        model_service.import_checkpoint(store, b"junk" * 100, "my model.ckpt")
    assert "my model.ckpt is not a readable" in str(e.value)
    assert ".upload-" not in str(e.value) and str(store.root) not in str(e.value)  # no server paths
    import mindspore as ms
    model = checkpoint.load(trained_ckpt)
    first = model.net.get_parameters().__next__()
    first.set_data(ms.Tensor(np.full(first.shape, np.nan, np.float32)))
    poisoned = checkpoint.save(model.net, model.config, tmp_path / "nan.ckpt")
    with pytest.raises(checkpoint.CheckpointError, match=f"not finite numbers .* in {first.name}"):
        model_service.import_checkpoint(store, poisoned.read_bytes(), "nan.ckpt")
    assert store.list_runs() == []  # nothing half-imported


def test_data_page_uses_a_valid_folder_and_refuses_a_bad_one(store, small_mnist, tmp_path):
    at = page("data")
    at.radio(key="data_source").set_value("folder").run()
    at.text_input(key="folder_path").input(str(tmp_path / "missing")).run()
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert any("does not exist" in e.value for e in at.error)
    assert at.session_state["config"].data_dir is None
    at.text_input(key="folder_path").input(str(small_mnist)).run()
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["config"].data_dir == str(small_mnist)
    assert any("1,200 training images" in c.value and "500 test images" in c.value for c in at.caption)
    steps = [m.value for m in at.markdown if m.value.startswith("**")]
    assert steps[:5] == ["**raw (MnistDataset)**", "**Rescale**", "**Normalize**", "**HWC2CHW**", "**Network input**"]


def test_a_symlink_loop_in_any_folder_field_gets_a_message_not_a_traceback(store, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    at = page("data")
    at.radio(key="data_source").set_value("folder").run()
    at.text_input(key="folder_path").input(str(tmp_path / "loop")).run()
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert not at.exception and any("loop of symbolic links" in e.value for e in at.error)
    at.radio(key="data_source").set_value("download").run()
    at.text_input(key="download_target").input(str(tmp_path / "loop" / "mnist")).run()
    next(b for b in at.button if "Download" in b.label).click().run()
    assert not at.exception and any("loop of symbolic links" in e.value for e in at.error)


def test_a_test_split_with_a_label_above_9_is_refused_on_evaluate(with_run, small_mnist, tmp_path):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(small_mnist, bad)
    labels = bad / "test" / "t10k-labels-idx1-ubyte"
    data = bytearray(labels.read_bytes())
    data[8] = 77
    labels.write_bytes(bytes(data))
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(bad)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("holds label 77" in e.value for e in at.error)


def test_a_link_on_a_shared_server_starts_only_from_the_stores_runs(with_run, monkeypatch, tmp_path):
    """init_checkpoint in a link names a checkpoint of this studio's runs, or nothing: the answer is the same
    whether the file exists or not (it tells a student nothing of the server's files)."""
    from tests.reliability.test_access import give_name
    store, run_id = with_run
    monkeypatch.setenv("STUDIO_PASSWORD", "pw")
    monkeypatch.setattr("ui.gate.THROTTLE", Throttle(spacing_s=0.0))
    outside = tmp_path / "elsewhere.ckpt"
    outside.write_bytes(store.checkpoint_path(run_id).read_bytes())  # a real checkpoint, outside the store
    shared = tmp_path / "team-data" / "base.ckpt"  # ... and one in the folders the server lets users read
    shared.parent.mkdir()
    shared.write_bytes(outside.read_bytes())
    monkeypatch.setenv("STUDIO_DATA_ROOTS", str(shared.parent))
    said = []
    for i, path in enumerate((outside, tmp_path / "missing.ckpt", "run:no-such-run", store.checkpoint_path(run_id),
                              f"run:{run_id}", shared)):
        at = page("configure", {"network": "mlp", "init_checkpoint": str(path)})
        at.text_input(key="login_password").input("pw")
        at.button[0].click().run()
        give_name(at, f"Student {i}")  # each AppTest is a browser of its own
        at.switch_page("app_pages/configure.py").run()
        warnings = " ".join(seen(w.value) for w in at.warning)
        said.append(("only from a run of this studio" in warnings, at.session_state["config"].init_checkpoint))
    assert said == [(True, None), (True, None), (True, None), (False, str(store.checkpoint_path(run_id))),
                    (False, f"run:{run_id}"), (False, str(shared))]


def test_a_number_hundreds_of_digits_long_gets_a_message_not_an_overflow(store):
    at = page("configure", {"epochs": "9" * 400, "hidden": "1" + "0" * 400})
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(seen(w.value) for w in at.warning)
    assert "(400 characters)" in warnings and "(401 characters)" in warnings and "9" * 100 not in warnings
    from tests.support.helpers import cli
    p = cli("core.cli.train", "--epochs", "9" * 400, "--store", str(store.root))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "(400 characters)" in p.stderr, p.stderr


def test_the_command_line_refuses_an_init_checkpoint_that_is_not_one_before_queueing(store, tmp_path):
    from tests.support.helpers import cli
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    p = cli("core.cli.train", "--network", "mlp", "--init-checkpoint", str(text), "--no-wait", "--store", str(store.root))
    assert p.returncode == 2 and "--init-checkpoint" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert store.list_runs() == [], "nothing was queued"


def test_a_folder_path_thousands_of_characters_long_gets_a_message(store, tmp_path):
    long = str(tmp_path / ("a" * 5000))
    at = page("data")
    at.radio(key="data_source").set_value("folder").run()
    at.text_input(key="folder_path").input(long).run()
    next(b for b in at.button if b.label == "Use this folder").click().run()
    assert not at.exception and any("is too long for a folder (5,0" in e.value for e in at.error)
