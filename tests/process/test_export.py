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
from core.model.network_build import build_network, network_for
from tests.support.apptest import page


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


@pytest.fixture(scope="module")
def trained_lenet5(tmp_path_factory, small_mnist):
    """A checkpoint of LeNet-5 trained two epochs on small_mnist (Graph mode, the default)."""
    from core.data.folders import validate_mnist_dir
    from core.training.loop import train
    cfg = TrainConfig(network="lenet5", optimizer="adam", learning_rate=0.002, epochs=2, data_dir=str(small_mnist))
    result = train(cfg, validate_mnist_dir(small_mnist))
    return checkpoint.save(result.net, cfg, tmp_path_factory.mktemp("ck") / "lenet5.ckpt")


@pytest.mark.parametrize("network", ["lenet5", "mlp"])
def test_an_onnx_file_of_a_trained_network_is_valid_onnx_and_onnx_runtime_reads_the_test_images_as_mindspore(
        request, tmp_path, network, small_mnist):
    """The file parsed by `onnx` (its checker, the graph's operators, every weight as an initializer) and run by
    ONNX Runtime directly on 500 real test images as raw 0-255 pixels in one batch (and a batch of one): the same
    digits as MindSpore's own prediction from the checkpoint, probabilities within 1e-4; its metadata says the
    preprocessing inside it."""
    import onnx
    import onnxruntime as ort

    from core.data.folders import load_arrays, validate_mnist_dir
    from core.data.pipeline import MEAN, STD
    from core.model.metrics import softmax
    ckpt = request.getfixturevalue("trained_lenet5" if network == "lenet5" else "trained_ckpt")
    path = model_service.export(ckpt, "onnx", tmp_path / "out")
    graph = onnx.load(str(path))
    onnx.checker.check_model(graph, full_check=True)
    ops = {node.op_type for node in graph.graph.node}
    assert ({"Conv", "MaxPool"} <= ops) == (network == "lenet5") and ops & {"Gemm", "MatMul"}, ops
    n_weights = sum(int(np.prod(t.dims)) for t in graph.graph.initializer if t.dims)  # not the scalar mean, std
    assert n_weights == sum(p.size for p in checkpoint.load(ckpt).net.get_parameters())

    images, labels = load_arrays(validate_mnist_dir(small_mnist), "test")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (given,) = session.get_inputs()
    assert given.shape == ["batch", 1, 28, 28]  # any batch
    raw = images.astype(np.float32)[:, None]  # raw 0-255 pixels, as a user of the file has them: it normalises
    got = softmax(session.run(None, {given.name: raw})[0])
    expected = model_service.predict(ckpt, images)
    assert len(got) == 500 and (got.argmax(1) == expected.argmax(1)).all()
    np.testing.assert_allclose(got, expected, atol=1e-4)
    one = softmax(session.run(None, {given.name: raw[:1]})[0])  # and a batch of one
    np.testing.assert_allclose(one, expected[:1], atol=1e-4)
    meta = {p.key: p.value for p in graph.metadata_props}
    assert (meta["mean"], meta["std"], meta["scale"]) == (str(MEAN), str(STD), "1/255")
    assert "NCHW" in meta["layout"] and "0-255" in meta["input"]
    assert TrainConfig.from_json(meta["studio_config"]) == checkpoint.load(ckpt).config
    assert (got.argmax(1) == labels).mean() > 0.7  # a trained network, not a constant one


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
    name = store_.get(run_id).name.replace(" ", "_") + ".mindir"  # the run's name: what the button says and saves
    assert any(b.label == f"⬇️ Download {name}" for b in at.get("download_button"))
    assert any(f'ms.load("{name}")' in c.value for c in at.code)  # predict.py beside it, for that file


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


def test_only_the_owner_or_an_admin_exports_a_run(with_run):
    """core/runs/people/permissions.py's rule, enforced: another person's Export is refused (saying who may) and recorded;
    the owner's goes ahead."""
    from core.runs.people.actions import Actions
    from core.runs.people.permissions import NotAllowed, person
    store_, run_id = with_run
    store_.update(run_id, submitter="ann")
    run = store_.get(run_id)
    with pytest.raises(NotAllowed) as e:
        Actions(store_, person("bob", proven=False)).export(run, "onnx")
    assert "ann" in str(e.value)
    assert Actions(store_, person("ann", proven=False)).export(run, "onnx")
    assert [(h.who, h.action, h.allowed) for h in store_.history()][:2] == [("ann", "export", True),
                                                                           ("bob", "export", False)]


def test_the_exports_preprocessing_is_the_trainings():
    from core.data import pipeline
    from core.model import export as exporting
    assert (exporting.MEAN, exporting.STD) == (pipeline.MEAN, pipeline.STD)


@pytest.mark.parametrize("fmt", ["onnx", "mindir"])
def test_the_predict_script_shown_beside_the_download_reads_a_png_as_the_studio_does(tmp_path, trained_ckpt, fmt,
                                                                                    shared_mnist):
    """predict.py, as the Runs page shows it, run as a user runs it on a PNG of a test digit next to the file."""
    import subprocess
    import sys

    from PIL import Image

    from core.model.export import predict_script
    image = read_images(shared_mnist / "test" / "t10k-images-idx3-ubyte")[7]
    Image.fromarray(image).save(tmp_path / "digit.png")
    path = model_service.export(trained_ckpt, fmt, tmp_path / "out")
    (tmp_path / f"my-run{path.suffix}").write_bytes(path.read_bytes())
    (tmp_path / "predict.py").write_text(predict_script(fmt, f"my-run{path.suffix}"))
    done = subprocess.run([sys.executable, "predict.py", "digit.png"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    expected = model_service.predict(trained_ckpt, image[None])[0]
    assert done.stdout.strip().splitlines()[-1] == f"digit {expected.argmax()} ({expected.max():.0%})"
