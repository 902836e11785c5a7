"""Export to MindIR and ONNX: the MindIR file loaded back (ms.load + nn.GraphCell) predicts what the
checkpoint predicts; the Runs page exports and offers the file."""
import numpy as np
import pytest

from core.app import model_service
from core.model import checkpoint
from core.config import TrainConfig
from core.model.export import export, predict_mindir
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
    got = predict_mindir(path, images)
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
