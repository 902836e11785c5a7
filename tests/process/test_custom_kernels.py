"""The project's C++ operators (core.kernels) against MindSpore's own: the same mathematics, forward and
gradients, on random and real inputs in every shape LeNet-5 uses; LeNet-5 trained on them against LeNet-5 on
MindSpore's operators, in Graph and PyNative mode; the switch that turns them off and the fallback without a
compiler."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import mindspore as ms
import mindspore.nn as nn
import numpy as np
import pytest
from mindspore import ops

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.data.idx import read_images
from core.model.evaluation import NetWithLoss
from core.kernels import custom_ops as custom_ops_module
from core.kernels import library as library_module
from core.model.losses import build_loss
from core.model.network_build import training_network
from core.networks.lenet5 import cells as lenet5_cells
from core.model.optim import build_optimizer
from core.runtime import set_mode
from core.training.steps import TrainStep
from tests.support.helpers import wait_for

LeNet5, FastLeNet5 = lenet5_cells()


@pytest.fixture
def kernels():
    found = custom_ops_module.custom_ops()
    assert found is not None, "the custom operators could not be built here (is g++ installed?)"
    return found


@pytest.fixture
def fresh_library():
    """library() and custom_ops() look again (they keep their answer for the process)."""
    library_module.library.cache_clear()
    custom_ops_module.custom_ops.cache_clear()
    yield
    library_module.library.cache_clear()
    custom_ops_module.custom_ops.cache_clear()


def real_images(shared_mnist, n: int, split: str = "test") -> np.ndarray:
    prefix = "t10k" if split == "test" else "train"
    images = read_images(shared_mnist / split / f"{prefix}-images-idx3-ubyte")[:n]
    return ((images.astype(np.float32) / 255.0 - 0.1307) / 0.3081)[:, None]


class _Loss(nn.Cell):
    """sum(f(inputs) * weights): its gradients are f's vector-Jacobian products with a random cotangent."""

    def __init__(self, f: nn.Cell, cotangent: np.ndarray):
        super().__init__()
        self.f = f
        self.cotangent = ms.Tensor(cotangent)

    def construct(self, x):
        return (self.f(x) * self.cotangent).sum()


class _Gradients(nn.Cell):
    def __init__(self, loss: nn.Cell):
        super().__init__()
        self.loss = loss
        self.grad = ops.GradOperation(get_all=True, get_by_list=True)
        self.params = ms.ParameterTuple(loss.trainable_params())

    def construct(self, x):
        return self.loss.f(x), self.grad(self.loss, self.params)(x)


def outputs_and_gradients(f: nn.Cell, x: np.ndarray, cotangent: np.ndarray):
    y, ((dx,), dparams) = _Gradients(_Loss(f, cotangent))(ms.Tensor(x))
    return y.asnumpy(), dx.asnumpy(), [d.asnumpy() for d in dparams]


class _StockReluPool(nn.Cell):
    def __init__(self, bias: np.ndarray):
        super().__init__()
        self.bias = ms.Parameter(ms.Tensor(bias), name="bias")
        self.add, self.relu, self.pool = ops.BiasAdd(), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2)

    def construct(self, x):
        return self.pool(self.relu(self.add(x, self.bias)))


class _CustomReluPool(nn.Cell):
    def __init__(self, op, bias: np.ndarray):
        super().__init__()
        self.bias = ms.Parameter(ms.Tensor(bias), name="bias")
        self.op = op

    def construct(self, x):
        return self.op(x, self.bias)


def conv1_outputs(shared_mnist, n: int) -> np.ndarray:
    """What LeNet-5's first convolution makes of real digits (blank regions: many equal values in a window)."""
    conv = nn.Conv2d(1, 6, 5, pad_mode="pad", padding=2, has_bias=False)
    return conv(ms.Tensor(real_images(shared_mnist, n))).asnumpy()


@pytest.mark.parametrize("source,shape", [("random", (64, 6, 28, 28)), ("random", (64, 16, 10, 10)),
                                          ("random", (3, 2, 7, 9)), ("real", (64, 6, 28, 28))])
def test_relu_pool_is_bias_relu_and_max_pool_with_the_same_gradients(kernels, shared_mnist, source, shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape).astype(np.float32) if source == "random"
         else conv1_outputs(shared_mnist, shape[0]))
    bias = (rng.standard_normal(shape[1]) * 0.3).astype(np.float32)
    cotangent = rng.standard_normal((shape[0], shape[1], shape[2] // 2, shape[3] // 2)).astype(np.float32)
    y, dx, (db,) = outputs_and_gradients(_CustomReluPool(kernels.relu_pool, bias), x, cotangent)
    y0, dx0, (db0,) = outputs_and_gradients(_StockReluPool(bias), x, cotangent)
    assert np.array_equal(y, y0)  # a max and a sum of two floats: exact
    assert np.array_equal(dx, dx0)  # each window's gradient at the same element
    assert np.count_nonzero(dx) > dx.size // 10
    np.testing.assert_allclose(db, db0, rtol=1e-5, atol=1e-5 * np.abs(db0).max())  # a float sum in another order


class _Conv(nn.Cell):
    def __init__(self, op, weight: np.ndarray):
        super().__init__()
        self.weight = ms.Parameter(ms.Tensor(weight), name="weight")
        self.op = op

    def construct(self, x):
        return self.op(x, self.weight)


class _Tracked(nn.Cell):
    """f(x) that also differentiates with respect to its input (GradOperation's get_all)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def construct(self, x):
        return self.f(x)


# Rows up to 32 wide take the kernel's vector path (MNIST's 28), wider ones its long-dot-product path.
@pytest.mark.parametrize("source,batch,k,width", [("random", 64, 5, 28), ("real", 64, 5, 28), ("real", 5, 5, 28),
                                                  ("random", 7, 3, 28), ("random", 3, 7, 40), ("random", 4, 5, 13)])
def test_conv_1ch_matches_mindspores_convolution_and_both_gradients(kernels, shared_mnist, source, batch, k, width):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((batch, 1, 28, width)).astype(np.float32) if source == "random"
         else real_images(shared_mnist, batch))
    weight = (rng.standard_normal((6, 1, k, k)) * 0.2).astype(np.float32)
    cotangent = rng.standard_normal((batch, 6, 28, width)).astype(np.float32)
    stock = nn.Conv2d(1, 6, k, pad_mode="pad", padding=(k - 1) // 2, has_bias=False)
    stock.weight.set_data(ms.Tensor(weight))
    y, dx, (dw,) = outputs_and_gradients(_Tracked(_Conv(kernels.conv_1ch, weight)), x, cotangent)
    y0, dx0, (dw0,) = outputs_and_gradients(_Tracked(stock), x, cotangent)
    for mine, theirs in ((y, y0), (dx, dx0), (dw, dw0)):  # float sums in another order: relative to the scale
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5 * np.abs(theirs).max())


def conv2_inputs(shared_mnist, n: int) -> np.ndarray:
    """What reaches LeNet-5's second convolution from real digits: the first's outputs, biased, ReLU'd and
    pooled (many zeros)."""
    rng = np.random.default_rng(4)
    bias = ms.Tensor((rng.standard_normal(6) * 0.3).astype(np.float32))
    return ops.relu(ops.max_pool2d(ms.Tensor(conv1_outputs(shared_mnist, n)) + bias.reshape(1, 6, 1, 1), 2, 2)).asnumpy()


# LeNet-5's second convolution, then shapes that take the kernel's other paths: more than 16 output channels
# (and not a multiple of 16), more than 6 input channels, rows wider than one 16-column vector, a 3x3 kernel.
@pytest.mark.parametrize("source,x_shape,w_shape", [("random", (64, 6, 14, 14), (16, 6, 5, 5)),
                                                    ("real", (64, 6, 14, 14), (16, 6, 5, 5)),
                                                    ("random", (3, 8, 9, 20), (5, 8, 3, 3)),
                                                    ("random", (2, 7, 8, 8), (20, 7, 5, 5))])
def test_conv_valid_matches_mindspores_convolution_and_both_gradients(kernels, shared_mnist, source, x_shape,
                                                                      w_shape):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(x_shape).astype(np.float32) if source == "random"
         else conv2_inputs(shared_mnist, x_shape[0]))
    weight = (rng.standard_normal(w_shape) * 0.2).astype(np.float32)
    k = w_shape[2]
    cotangent = rng.standard_normal((x_shape[0], w_shape[0], x_shape[2] - k + 1, x_shape[3] - k + 1)
                                    ).astype(np.float32)
    stock = nn.Conv2d(w_shape[1], w_shape[0], k, pad_mode="valid", has_bias=False)
    stock.weight.set_data(ms.Tensor(weight))
    y, dx, (dw,) = outputs_and_gradients(_Tracked(_Conv(kernels.conv_valid, weight)), x, cotangent)
    y0, dx0, (dw0,) = outputs_and_gradients(_Tracked(stock), x, cotangent)
    assert np.count_nonzero(dx0) > dx0.size // 2
    for mine, theirs in ((y, y0), (dx, dx0), (dw, dw0)):  # float sums in another order: relative to the scale
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5 * np.abs(theirs).max())


def train_steps(net: nn.Cell, images: np.ndarray, labels: np.ndarray, steps: int) -> dict[str, np.ndarray]:
    config = TrainConfig(network="lenet5")
    step = TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))
    step.set_train()
    for i in range(steps):
        sl = slice(i * 64, (i + 1) * 64)
        step(ms.Tensor(images[sl]), ms.Tensor(labels[sl]))
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


@pytest.mark.parametrize("mode", ["graph", "pynative"])
def test_lenet5_on_custom_operators_trains_the_same_weights(kernels, shared_mnist, mode):
    """An epoch of the bundled 5,000 training images (78 steps of 64; PyNative, an operator at a time: 20 steps)
    from the same start: the same weights to within 0.1 % of how far training moved each, though every step's
    sums run in another order. (Measured here: the first step identical, 1e-6 of the movement after 60 steps,
    2e-4 after 78; past ~90 steps one flipped comparison - a ReLU or a pool's maximum - is enough for SGD's
    trajectories to part, as they would between two orders of the same sums in MindSpore's own kernels.)"""
    from core.data.idx import read_labels
    steps = 78 if mode == "graph" else 20
    images = real_images(shared_mnist, steps * 64, split="train")
    labels = read_labels(shared_mnist / "train" / "train-labels-idx1-ubyte")[:steps * 64].astype(np.int32)
    set_mode(mode)
    try:
        ms.set_seed(7)
        stock = LeNet5()
        fast = FastLeNet5(kernels)
        start = {p.name: p.asnumpy().copy() for p in stock.get_parameters()}
        for p in fast.get_parameters():
            p.set_data(ms.Tensor(start[p.name]))
        theirs = train_steps(stock, images, labels, steps)
        mine = train_steps(fast, images, labels, steps)
    finally:
        set_mode("graph")
    assert mine.keys() == theirs.keys()
    for name in theirs:
        moved = np.abs(theirs[name] - start[name]).max()
        assert moved > 1e-3, f"{name} did not train"
        assert np.abs(mine[name] - theirs[name]).max() <= 1e-3 * moved, name


def test_training_uses_the_custom_operators_unless_switched_off(monkeypatch, fresh_library):
    lenet = TrainConfig(network="lenet5")
    assert isinstance(training_network(lenet), FastLeNet5)
    assert type(training_network(lenet.with_(amp_level="O2"))) is LeNet5  # float16: MindSpore's operators
    assert type(training_network(TrainConfig(network="mlp"))) is not FastLeNet5
    monkeypatch.setenv("STUDIO_CUSTOM_KERNELS", "0")
    library_module.library.cache_clear()
    custom_ops_module.custom_ops.cache_clear()
    assert type(training_network(lenet)) is LeNet5


def test_a_lenet5_runs_log_says_whose_operators_it_trains_on(small_mnist, monkeypatch, fresh_library):
    from core.data.folders import validate_mnist_dir
    from core.training.events import EventLog, LogEvent
    from core.training.loop import train
    config = TrainConfig(network="lenet5", epochs=1, data_dir=str(small_mnist), val_fraction=0.0)
    said = {}
    for switch in ("1", "0"):
        monkeypatch.setenv("STUDIO_CUSTOM_KERNELS", switch)
        library_module.library.cache_clear()
        custom_ops_module.custom_ops.cache_clear()
        events = EventLog()
        train(config, validate_mnist_dir(config.data_dir), [events])
        said[switch] = [e.message for e in events.of(LogEvent) if "operators" in e.message]
    assert said["1"] == ["LeNet-5 trains on the project's C++ operators (core/kernels)"]
    assert len(said["0"]) == 1 and "MindSpore's own operators" in said["0"][0] and "STUDIO_CUSTOM_KERNELS=0" in \
        said["0"][0]


def test_without_a_compiler_lenet5_trains_on_mindspores_operators_and_says_why(monkeypatch, tmp_path, caplog,
                                                                                 fresh_library):
    monkeypatch.setenv("STUDIO_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with caplog.at_level(logging.WARNING):
        assert type(training_network(TrainConfig(network="lenet5"))) is LeNet5
    assert "no C++ compiler" in caplog.text and "apt-get install g++" in caplog.text


def test_a_compiler_that_fails_is_reported_and_mindspores_operators_train(monkeypatch, tmp_path, caplog,
                                                                         fresh_library):
    monkeypatch.setenv("STUDIO_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", "false")  # a compiler that exits 1
    with caplog.at_level(logging.WARNING):
        assert type(training_network(TrainConfig(network="lenet5"))) is LeNet5
    assert "could not be built" in caplog.text and "STUDIO_CUSTOM_KERNELS=0" in caplog.text
    assert list(tmp_path.iterdir()) == []  # no half-written library left behind


def test_the_library_is_built_once_into_the_cache_and_reused(monkeypatch, tmp_path, fresh_library):
    monkeypatch.setenv("STUDIO_KERNEL_CACHE", str(tmp_path))
    first = library_module.library()
    assert first is not None and first.parent == tmp_path and first.exists()
    built_at = first.stat().st_mtime_ns
    library_module.library.cache_clear()
    assert library_module.library() == first and first.stat().st_mtime_ns == built_at


def _blocked_flock_waiters() -> int:
    """Processes waiting for an flock(2) held by another (/proc/locks lists each waiter after "->")."""
    return sum("-> FLOCK" in line for line in Path("/proc/locks").read_text().splitlines())


def test_processes_that_start_together_build_the_library_once(tmp_path):
    """The ranks of a data-parallel run find the library missing at once: the first builds it, the other waits
    for it and loads the same file. A stand-in compiler records each call and finishes when the test says."""
    calls, go = tmp_path / "calls", tmp_path / "go"
    compiler = tmp_path / "cxx"
    compiler.write_text(f"""#!/bin/sh
echo called >> {calls}
while [ ! -e {go} ]; do sleep 0.05; done
while [ "$1" != "-o" ]; do shift; done
echo library > "$2"
""")
    compiler.chmod(0o755)
    env = dict(os.environ, STUDIO_KERNEL_CACHE=str(tmp_path / "cache"), CXX=str(compiler))
    code = "from core.kernels.library import library; print(library())"
    first = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    wait_for(calls.exists, 60, "the first process to start compiling")
    before = _blocked_flock_waiters()
    second = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE,
                              text=True)
    # the second either waits for the first's build (the lock) or compiles too (two lines in calls)
    wait_for(lambda: _blocked_flock_waiters() > before or len(calls.read_text().splitlines()) > 1, 60,
             "the second process to wait for the build or to compile")
    go.touch()
    outputs = [p.communicate(timeout=60)[0].strip() for p in (first, second)]
    assert calls.read_text().splitlines() == ["called"], "the library was compiled more than once"
    assert outputs[0] == outputs[1] and outputs[0].endswith(".so") and Path(outputs[0]).read_text() == "library\n"


def test_a_changed_header_names_another_library(monkeypatch, tmp_path):
    """The operators include vectors.h: a library built before a change to it is not loaded after."""
    assert [h.name for h in library_module.HEADERS] == ["vectors.h"]
    before = library_module.library_path("g++")
    changed = tmp_path / "vectors.h"
    changed.write_text(library_module.HEADERS[0].read_text() + "// changed\n")
    monkeypatch.setattr(library_module, "HEADERS", (changed,))
    assert library_module.library_path("g++") != before
