"""Export to MindIR and ONNX: the MindIR file loaded back (ms.load + nn.GraphCell) predicts what the
checkpoint predicts; the Runs page exports and offers the file."""
import numpy as np
import pytest

from core.app import model_service
from core.model import checkpoint
from core.config import TrainConfig
from core.model.export import export
from core.model.export_check import predict_exported
from core.data.idx import read_images
from core.model.networks import build_network, network_for
from tests.apptest import page


@pytest.mark.parametrize("network,hidden", [("lenet5", ()), ("mlp", (512, 512)), ("mlp", (64, 32, 16))])
def test_mindir_round_trip_predicts_the_same(tmp_path, network, hidden, shared_mnist):
    """Any MLP shape too: the network a checkpoint was shaped with is rebuilt from its config."""
    config = TrainConfig(network=network, hidden=hidden or TrainConfig().hidden)
    ckpt = checkpoint.save(network_for(config), config, tmp_path / "m.ckpt")
    assert checkpoint.load(ckpt).config.hidden == config.hidden
    images = read_images(shared_mnist / "test" / "t10k-images-idx3-ubyte")[:8]
    path = model_service.export(ckpt, "mindir", tmp_path / "out")
    assert path.name == "model.mindir" and sorted(p.name for p in path.parent.iterdir()) == ["model.mindir"]
    expected = model_service.predict(ckpt, images)
    got = predict_exported(path, "mindir", images)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got.argmax(1).tolist() == expected.argmax(1).tolist()


def test_onnx_export_writes_the_graph(tmp_path):
    ckpt = checkpoint.save(build_network("lenet5"), TrainConfig(), tmp_path / "m.ckpt")
    path = model_service.export(ckpt, "onnx", tmp_path / "out")
    data = path.read_bytes()
    assert path.suffix == ".onnx" and len(data) > 61_706 * 4  # every weight is in the file
    assert b"Conv" in data and b"MaxPool" in data and (b"Gemm" in data or b"MatMul" in data)


def test_bad_export_requests(tmp_path):
    with pytest.raises(ValueError, match="unknown export format"):
        export(tmp_path / "x.ckpt", "tflite", tmp_path)
    with pytest.raises(checkpoint.CheckpointError, match="no longer exists"):
        model_service.export(tmp_path / "missing.ckpt", "mindir", tmp_path / "out")


def test_runs_page_exports_and_offers_the_file(with_run):
    store_, run_id = with_run
    at = page("runs")
    at.radio(key="export_format").set_value("mindir").run()
    at.button(key="export").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert (store_.export_dir(run_id) / "model.mindir").exists()
    assert any(b.label.startswith("⬇️ Download model.mindir") for b in at.get("download_button"))


@pytest.mark.parametrize("fmt", ["onnx", "mindir"])
def test_an_exported_file_read_back_by_its_runtime_predicts_what_the_checkpoint_predicts(tmp_path, fmt, trained_ckpt,
                                                                                      small_mnist):
    from core.data.folders import load_arrays, validate_mnist_dir
    images, _ = load_arrays(validate_mnist_dir(small_mnist), "test")
    path = model_service.export(trained_ckpt, fmt, tmp_path / "out")
    a = model_service.check_export(trained_ckpt, path, fmt, images)
    assert (a.fmt, a.n) == (fmt, 500) and a.all_identical and a.max_probability_diff < 1e-4
    # The check can fail: another model's file disagrees with this checkpoint.
    other = checkpoint.save(network_for(TrainConfig(network="mlp")), TrainConfig(network="mlp"), tmp_path / "o.ckpt")
    b = model_service.check_export(other, path, fmt, images)
    assert b.identical < b.n and b.max_probability_diff > 0.1


def test_a_layer_not_checked_to_export_is_refused_before_export_by_name():
    import mindspore.nn as nn

    from core.messages import ExplainedValueError
    from core.model.export_check import refuse_unexportable
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(784, 10), nn.LRN()])
    with pytest.raises(ExplainedValueError) as e:
        refuse_unexportable(net, "onnx")
    assert "LRN" in str(e.value) and "2" in str(e.value) and "ONNX" in str(e.value)
    refuse_unexportable(build_network("lenet5"), "onnx")  # ours pass
    refuse_unexportable(network_for(TrainConfig(network="mlp", hidden=(64, 32))), "mindir")


def test_the_runs_page_proves_the_exported_file_reads_the_same(with_run):
    store_, run_id = with_run
    at = page("runs")
    at.radio(key="export_format").set_value("onnx").run()
    at.button(key="export").click().run()
    assert not at.exception, [e.value for e in at.exception]
    said = [s.value for s in at.success]
    assert any("ONNX Runtime" in s and "500 of 500" in s for s in said), said
    assert any("Netron" in c.value for c in at.caption)
