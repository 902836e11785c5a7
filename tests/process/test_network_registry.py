"""Every registered network (core/networks/) walks the whole studio: built from its spec, summarised and
drawn, trained in Graph mode in both training styles, evaluated, recognised from a plain checkpoint, exported to
ONNX and MindIR and read back the same, and read on a drawn digit (Draw and Inside). A new network module is
tested here the moment it registers."""
import ast
from pathlib import Path

import numpy as np
import pytest

from core.app import model_service
from core.config import NETWORKS, TrainConfig
from core.data.folders import validate_mnist_dir
from core.model import checkpoint
from core.model.export_check import predict_exported
from core.model.network_build import count_parameters, network_for, summarize
from core.networks import network_spec
from tests.support.apptest import page
from ui.network_view import DOTS_SHOWN

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_holds_the_three_networks_in_the_pages_order():
    assert NETWORKS[:2] == ("lenet5", "mlp") and "resnet" in NETWORKS


def _drawn_seven() -> np.ndarray:
    """A 7 as a person draws it: a bar and a slanted stem, thick strokes on black, as the Draw page's 28x28."""
    image = np.zeros((28, 28), np.uint8)
    image[5:8, 6:22] = 255
    for row in range(8, 24):
        col = 21 - (row - 8) // 2
        image[row, col - 1:col + 2] = 255
    return image


@pytest.fixture(scope="module", params=NETWORKS)
def trained(request, tmp_path_factory, small_mnist):
    """Each network trained 2 epochs in Graph mode, Cell style, and saved: (config, checkpoint path)."""
    from core.training.loop import train
    config = TrainConfig(network=request.param, optimizer="adam", learning_rate=0.002, epochs=2,
                         data_dir=str(small_mnist))
    result = train(config, validate_mnist_dir(small_mnist))
    assert result.status == "completed" and result.history[-1].val_acc > 0.3, result.history
    return config, checkpoint.save(result.net, config, tmp_path_factory.mktemp("nets") / f"{request.param}.ckpt")


def test_the_layer_table_and_the_diagram_describe_the_network_built(trained):
    config, _ = trained
    net = network_for(config)
    rows = summarize(net)
    assert rows[-1].output_shape == (10,)
    assert sum(r.params for r in rows) == count_parameters(net) > 0
    columns = network_spec(config.network).diagram(config)
    assert (columns[0].kind, columns[0].units) == ("input", 784)
    assert (columns[-1].kind, columns[-1].units) == ("output", 10)
    assert config.shape_label and config.network in {n for n in NETWORKS}


def test_a_plain_checkpoint_is_recognised_and_evaluates_as_saved(trained, tmp_path, small_mnist):
    config, ckpt = trained
    import mindspore as ms  # deferred: MindSpore, loaded after the fixture trained
    raw = ms.load_checkpoint(str(ckpt))
    assert checkpoint.infer_network(raw).network == config.network
    report = model_service.evaluate(ckpt, str(small_mnist), "test")
    assert report.accuracy > 0.3  # 2 epochs (34 steps) on 1,080 images: well above a guess (0.1)


@pytest.mark.parametrize("fmt", ["onnx", "mindir"])
def test_the_exported_file_reads_the_test_images_as_the_checkpoint(trained, tmp_path, small_mnist, fmt):
    config, ckpt = trained
    from core.data.folders import load_arrays
    images, _ = load_arrays(validate_mnist_dir(small_mnist), "test")
    path = model_service.export(ckpt, fmt, tmp_path / "out")
    got, expected = predict_exported(path, fmt, images[:200]), model_service.predict(ckpt, images[:200])
    assert (got.argmax(1) == expected.argmax(1)).all()
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_a_drawn_digit_is_read_and_looked_inside(trained):
    config, ckpt = trained
    seven = _drawn_seven()
    probs = model_service.predict(ckpt, seven[None])
    assert probs.shape == (1, 10) and abs(float(probs.sum()) - 1) < 1e-4
    inside = model_service.inspect(ckpt, seven)
    assert inside.saliency.shape == (28, 28) and inside.predicted == int(probs.argmax())
    assert inside.layers[-1][1].shape == (10,) and inside.filters.ndim == 3


@pytest.mark.parametrize("network", NETWORKS)
def test_every_network_trains_functional_style_in_graph_mode(network, small_mnist):
    """value_and_grad + optimizer (BatchNorm's moving statistics update as a side effect in the graph)."""
    from core.training.loop import train
    config = TrainConfig(network=network, style="functional", optimizer="adam", learning_rate=0.002, epochs=1,
                         data_dir=str(small_mnist))
    result = train(config, validate_mnist_dir(small_mnist))
    assert result.status == "completed" and result.history[-1].train_loss < 2.2, result.history


@pytest.mark.parametrize("network", NETWORKS)
def test_configure_offers_the_network_and_draws_it(store, network):
    at = page("configure", {"network": network})
    assert not at.exception, [e.value for e in at.exception]
    assert next(s for s in at.selectbox if s.key == "cfg_network").value == network
    picture = next(m.value for m in at.markdown if "network-picture" in m.value)  # an SVG: no Plotly to load
    columns = network_spec(network).diagram(TrainConfig(network=network))
    assert picture.count("<circle") == sum(min(c.units, DOTS_SHOWN) for c in columns), "a dot per unit drawn"
    assert all(f">{c.units:,}</tspan>" in picture for c in columns), "each column's size under it"
    assert any(m.label == "Trainable parameters" and int(m.value.replace(",", "")) > 0 for m in at.metric)
    hidden_shown = any((ti.key or "").startswith("cfg_hidden") for ti in at.text_input)
    assert hidden_shown == ("hidden" in network_spec(network).shape_fields)


def _string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def test_no_module_outside_its_own_names_a_network():
    """Pages, the queue, the warm pool, export and the command lines read the registry: only the network's own
    module, the default config and the presets (which name the network they tune) say a network's name."""
    allowed = {ROOT / "core/config.py", ROOT / "core/presets.py"}
    names = set(NETWORKS)
    offenders = sorted(f"{p.relative_to(ROOT)}: {sorted(_string_constants(p) & names)}"
                       for folder in ("core", "ui", "app_pages") for p in (ROOT / folder).rglob("*.py")
                       if p not in allowed and p.parent != ROOT / "core/networks"
                       and _string_constants(p) & names)
    assert offenders == []
