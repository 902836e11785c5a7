"""Weights over time: per-layer weight and gradient statistics recorded every epoch, stored, and diagnosed."""
import math

import numpy as np
import pytest

from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.training.layer_stats import LayerStat, diagnose, summarize
from core.training import build
from core.training.loop import train
from core.training.events import Callback, EventLog, LayersEvent
from core.training.weight_arrays import snapshot
from tests.support.apptest import page


@pytest.fixture(scope="module")
def folder(small_mnist):
    return validate_mnist_dir(small_mnist)


def test_summarize_counts_every_value_once(rng):
    v = rng.standard_normal((20, 30)).astype(np.float32)
    s = summarize(3, "fc.weight", "weight", v)
    assert (s.epoch, s.param, s.kind) == (3, "fc.weight", "weight")
    assert s.mean == pytest.approx(float(v.mean()), abs=1e-6) and s.std == pytest.approx(float(v.std()), rel=1e-5)
    assert s.norm == pytest.approx(float(np.linalg.norm(v)), rel=1e-5)
    assert sum(s.hist_counts) == v.size and len(s.hist_edges) == len(s.hist_counts) + 1
    assert s.hist_edges[0] == pytest.approx(v.min()) and s.hist_edges[-1] == pytest.approx(v.max())
    zeros = summarize(0, "b", "weight", np.zeros(6))
    assert zeros.zeros == 1.0 and sum(zeros.hist_counts) == 6 and zeros.std == 0
    bad = summarize(1, "g", "grad", np.array([1.0, np.nan, 2.0]))
    assert math.isnan(bad.mean) and sum(bad.hist_counts) == 2  # a diverging tensor shows as non-finite


def _grad(epoch, param, norm):
    return LayerStat(epoch, param, "grad", 0, 0, 0, 0, norm, 0, (0.0, 1.0), (1,))


def test_diagnose_names_dead_and_exploding_layers_only():
    stats = [_grad(1, "ok", 0.5), _grad(2, "ok", 0.4),
             _grad(1, "dead", 0.2), _grad(2, "dead", 0.0),
             _grad(1, "boom", 0.1), _grad(2, "boom", 5.0),
             _grad(1, "nan", 0.1), _grad(2, "nan", math.nan)]
    notes = diagnose(stats)
    assert sorted((n.param, n.kind) for n in notes) == [("boom", "exploding"), ("dead", "dead"), ("nan", "not_finite")]
    words = {n.param: n.english() for n in notes}
    assert "stopped learning" in words["dead"] and "exploding" in words["boom"] and "not finite" in words["nan"]


@pytest.mark.parametrize("style", ["cell", "functional"])
def test_trainer_records_the_real_gradients_of_each_epochs_last_step(folder, monkeypatch, style):
    """Plain SGD: the weights after an epoch's last step are the weights before it minus lr x gradient,
    so the recorded gradient statistics must match (before - after) / lr for every parameter."""
    lr = 0.05
    before = {}
    real = build.make_train_step

    def spying(config, net, loss_fn, optimizer, parallel=None, steps_per_epoch=1, compiled_ahead=False):
        step = real(config, net, loss_fn, optimizer, parallel, steps_per_epoch, compiled_ahead)
        inner = step.with_grads

        def with_grads(data, label):
            before[len(before) + 1] = snapshot(net)
            return inner(data, label)
        step.with_grads = with_grads
        return step

    monkeypatch.setattr(build, "make_train_step", spying)
    cfg = TrainConfig(network="lenet5", style=style, mode="graph", optimizer="sgd", learning_rate=lr,
                      batch_size=64, epochs=2, val_fraction=0.1)
    after, events = {}, EventLog()

    class KeepWeights(Callback):
        def on_epoch_end(self, net, metrics):
            after[metrics.epoch] = snapshot(net)
    train(cfg, folder, [events, KeepWeights()])
    layers = events.of(LayersEvent)
    assert [e.epoch for e in layers] == [0, 1, 2]
    assert {s.kind for s in layers[0].stats} == {"weight"}  # before training: no gradient yet
    names = list(after[1])
    assert len(names) == 10  # LeNet-5: 5 layers x (weight, bias)
    for e in (1, 2):
        stats = {(s.param, s.kind): s for s in layers[e].stats}
        assert set(stats) == {(n, k) for n in names for k in ("weight", "grad")}
        for n in names:
            assert stats[(n, "weight")].mean == pytest.approx(float(after[e][n].astype(np.float64).mean()), abs=1e-9)
            implied = (before[e][n].astype(np.float64) - after[e][n]) / lr
            g = stats[(n, "grad")]
            assert g.norm == pytest.approx(float(np.linalg.norm(implied)), rel=1e-3), n
            assert g.mean == pytest.approx(float(implied.mean()), abs=1e-4 + 1e-3 * abs(implied.mean())), n
            assert g.norm > 0
    grad_norms = [{s.param: s.norm for s in layers[e].stats if s.kind == "grad"} for e in (1, 2)]
    assert grad_norms[0] != grad_norms[1]  # a new gradient each epoch, not a cached one


def test_a_stored_run_keeps_its_layer_statistics(store, small_mnist):
    from core.runs.worker.execute import execute
    cfg = TrainConfig(network="mlp", mode="graph", epochs=2, batch_size=128, data_dir=str(small_mnist))
    run_id = store.create_run(cfg, source="cli")
    assert execute(store, run_id) == "completed"
    stats = store.layer_stats(run_id)
    assert sorted({s.epoch for s in stats}) == [0, 1, 2]
    grads = [s for s in stats if s.kind == "grad"]
    assert {s.epoch for s in grads} == {1, 2} and all(s.norm > 0 and sum(s.hist_counts) > 0 for s in grads)
    assert [s.param for s in stats if s.epoch == 0] == ["classifier.0.weight", "classifier.0.bias",
                                                        "classifier.2.weight", "classifier.2.bias",
                                                        "classifier.4.weight", "classifier.4.bias"]
    assert diagnose(stats) == []  # a healthy run raises no alarm

    at = page("weights")
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 2  # curves and play-back
    assert any("No dead or exploding layer" in s.value for s in at.success)
    at.radio(key="weights_kind").set_value("grad").run()
    assert not at.exception and len(at.get("plotly_chart")) == 2
    # a layer whose gradient vanished is named on the page
    store.add_layer_stats(run_id, [summarize(3, "classifier.2.weight", "grad", np.zeros((4, 4)))])
    at.run()
    assert any("classifier.2.weight" in w.value and "stopped learning" in w.value for w in at.warning)

    store.truncate_after(run_id, 1)
    assert max(s.epoch for s in store.layer_stats(run_id)) == 1
    store.delete(run_id)
    assert store.layer_stats(run_id) == []
