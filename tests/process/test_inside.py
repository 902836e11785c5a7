"""Inside the network: layer outputs, saliency (checked against finite differences) and filters, on the
core functions and on the Evaluate and Draw pages."""
import os
import subprocess
import sys

import numpy as np
import pytest

from core import PROJECT_ROOT
from core.app import model_service
from core.model import checkpoint
from core.config import TrainConfig
from core.data.idx import read_images
from core.model.inspection import class_gradient, inspect
from core.model.network_build import build_network
from core.data.pipeline import preprocess_numpy
from tests.support.apptest import page


@pytest.fixture(scope="module")
def digit(shared_mnist):
    return read_images(shared_mnist / "test" / "t10k-images-idx3-ubyte")[0]  # a real 7


@pytest.mark.parametrize("network", ["lenet5", "mlp"])
def test_layers_saliency_and_filters(network, digit):
    import mindspore as ms
    net = build_network(network)
    r = inspect(net, digit)
    logits = net(ms.Tensor(preprocess_numpy(digit[None]))).asnumpy()[0]
    np.testing.assert_allclose(r.layers[-1][1], logits, rtol=1e-4, atol=1e-5)  # the layers compose to the net
    assert r.predicted == int(logits.argmax()) and abs(r.probs.sum() - 1) < 1e-5
    shapes = [out.shape for _, out in r.layers]
    if network == "lenet5":
        assert shapes[:6] == [(6, 28, 28), (6, 28, 28), (6, 14, 14), (16, 10, 10), (16, 10, 10), (16, 5, 5)]
        assert r.filters.shape == (6, 5, 5)
    else:
        assert shapes[:3] == [(784,), (512,), (512,)] and r.filters.shape == (16, 28, 28)
    assert r.saliency.shape == (28, 28) and (r.saliency >= 0).all() and r.saliency.max() > 0


def test_saliency_is_the_gradient(digit):
    """Central finite differences on a few pixels agree with ms.grad."""
    import mindspore as ms
    net = build_network("mlp")  # piecewise linear in its input: differences are exact away from kinks
    net.set_train(False)
    x = preprocess_numpy(digit[None])
    cls = 3
    grad = class_gradient(net, ms.Tensor(x), cls)[0, 0]
    eps = 1e-2
    for (i, j) in [(14, 14), (10, 20), (5, 5), (20, 8)]:
        up, down = x.copy(), x.copy()
        up[0, 0, i, j] += eps
        down[0, 0, i, j] -= eps
        numeric = (net(ms.Tensor(up)).asnumpy()[0, cls] - net(ms.Tensor(down)).asnumpy()[0, cls]) / (2 * eps)
        assert abs(numeric - grad[i, j]) < 1e-3 + 1e-2 * abs(numeric), (i, j, numeric, grad[i, j])


def test_the_app_service_and_the_evaluate_page_show_it(with_run, tmp_path, digit, small_mnist):
    ckpt = checkpoint.save(build_network("lenet5"), TrainConfig(), tmp_path / "l.ckpt")
    r = model_service.inspect(ckpt, digit)
    assert r.layers[0][1].shape == (6, 28, 28)
    at = page("evaluate")
    at.text_input(key="eval_dir").input(str(small_mnist)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value.startswith("🔬 Inside the network") for s in at.subheader)
    assert any("saliency" in m.value.lower() for m in at.markdown)


def test_the_servers_preload_loads_the_newest_model_with_its_inspection_compiled(with_run):
    """What the app starts after a server's first page (in a fresh process, as a server is): after the preload,
    the newest finished run's model is loaded and its inspection graph built, so that the first Evaluate
    or Draw of it compiles nothing."""
    store, run_id = with_run
    script = (
        "import sys; from core.app import model_service as m; from core.runs.store import RunStore\n"
        "store = RunStore(sys.argv[1]); m.preload(store).join(timeout=120)\n"
        "ckpt = store.get(sys.argv[2]).checkpoint\n"
        "nets = [model.net for key, model in m._models.items() if key[0] == ckpt]\n"
        "print(len(nets), all(hasattr(n, '_studio_class_grad') for n in nets), m.preload(store) is m.preload(store),\n"
        "      m.preload_cpu_seconds() > 0.2)\n")
    p = subprocess.run([sys.executable, "-c", script, str(store.root), run_id], cwd=PROJECT_ROOT,
                       env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    # ... and its CPU time is known (the live views' pacing leaves it out of the server's own work)
    assert p.stdout.split()[-4:] == ["1", "True", "True", "True"], p.stdout + p.stderr[-2000:]
