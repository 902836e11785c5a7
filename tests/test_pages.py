"""Every page through Streamlit's AppTest, against a real run store and real MindSpore."""
import pytest

from core import checkpoint, model_service
from core.config import TrainConfig
from tests.apptest import page, store, trained_ckpt, with_run  # noqa: F401  (fixtures)
from tests.helpers import wait_for


@pytest.mark.parametrize("name", ["data", "configure", "train", "evaluate", "draw", "runs"])
def test_every_page_renders(with_run, name):
    at = page(name)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.endswith({"data": "Data", "configure": "Configure", "train": "Train",
                                       "evaluate": "Evaluate", "draw": "Draw & predict", "runs": "Runs"}[name])


def test_configure_widgets_change_the_config_and_the_url(store):
    at = page("configure")
    at.selectbox(key="cfg_network").select("mlp").run()
    at.text_input(key="cfg_learning_rate").input("0.05").run()
    at.selectbox(key="cfg_optimizer").select("adam").run()
    assert not at.exception
    cfg = at.session_state["config"]
    assert (cfg.network, cfg.learning_rate, cfg.optimizer) == ("mlp", 0.05, "adam")
    assert at.query_params["network"] == "mlp" and at.query_params["learning_rate"] == "0.05"
    assert [m.value for m in at.metric if m.label == "Trainable parameters"] == ["669,706"]


def test_configure_refuses_invalid_values_at_the_field(store):
    at = page("configure")
    at.text_input(key="cfg_learning_rate").input("fast").run()
    at.text_input(key="cfg_batch_size").input("0").run()
    errors = [e.value for e in at.error]
    assert any("'fast' is not a valid float" in e for e in errors)
    assert any("must be ≥ 1" in e for e in errors)
    assert at.session_state["config"] == TrainConfig()  # the last valid config stays


def test_a_link_reproduces_a_config_and_bad_link_values_are_reported(store):
    at = page("configure", {"network": "mlp", "epochs": "3", "optimizer": "lion", "learning_rate": "nan",
                            "colour": "red"})
    cfg = at.session_state["config"]
    assert (cfg.network, cfg.epochs, cfg.optimizer, cfg.learning_rate) == ("mlp", 3, "momentum", 0.01)
    warnings = " ".join(w.value for w in at.warning)
    assert "optimizer" in warnings and "learning_rate" in warnings and "colour" in warnings


def test_start_creates_a_run_and_stop_stops_it(store, small_mnist):
    at = page("train")
    at.session_state["config"] = TrainConfig(network="mlp", mode="pynative", epochs=100, batch_size=16,
                                             data_dir=str(small_mnist))
    at.run()
    at.button[0].click().run()  # Start
    assert not at.exception, [e.value for e in at.exception]
    (run,) = store.list_runs()
    assert run.source == "dashboard" and at.session_state["run_id"] == run.id
    wait_for(lambda: store.get(run.id).step > 3, what="training steps")
    at.run()  # what a fragment tick does
    assert any("Pause" in b.label for b in at.button) and any("Stop" in b.label for b in at.button)
    assert not at.exception
    next(b for b in at.button if "Stop" in b.label).click().run()
    stopped = wait_for(lambda: (r := store.get(run.id)).status == "stopped" and r, timeout=30, what="stop")
    assert stopped.checkpoint
    at.run()
    assert any("Stopped" in w.value for w in at.warning)


def test_evaluate_shows_metrics(with_run, small_mnist):
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(small_mnist)).run()
    assert not at.exception, [e.value for e in at.exception]
    labels = {m.label: m.value for m in at.metric}
    assert labels["accuracy"].endswith("%") and float(labels["accuracy"][:-1]) > 50
    assert "of 500" in labels["misclassified"]


def test_draw_asks_for_a_drawing_when_the_canvas_is_empty(with_run):
    at = page("draw")
    assert not at.exception
    assert any("canvas is empty" in i.value for i in at.info)


def test_runs_page_renames(with_run):
    store, run_id = with_run
    at = page("runs")
    at.text_input(key=f"name_{run_id}").input("my best model").run()
    next(b for b in at.button if b.label == "Rename").click().run()
    assert store.get(run_id).name == "my best model"


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
