"""Real MindSpore training on small real MNIST: both styles in both modes, early stopping, control, divergence."""
import threading
import time

import numpy as np
import pytest

from core.training.run_control import Control
from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.data.memory_batches import MemoryBatches
from core.training.events import Callback, EpochMetrics, EventLog, StepEvent
from core.training.loop import train
from core.training.weight_arrays import snapshot


@pytest.fixture(scope="module")
def folder(small_mnist):
    return validate_mnist_dir(small_mnist)


def _step_losses(events):
    return [e.loss for e in events.of(StepEvent)]


@pytest.mark.parametrize("mode", ["graph", "pynative"])
def test_both_styles_train_and_agree(folder, mode):
    """One epoch per style: loss falls, and both styles produce the same metric stream (same seed)."""
    streams = {}
    for style in ("cell", "functional"):
        cfg = TrainConfig(network="lenet5", style=style, mode=mode, optimizer="adam", learning_rate=0.003,
                          batch_size=32, epochs=1, val_fraction=0.1)
        events = EventLog()
        result = train(cfg, folder, [events])
        losses = _step_losses(events)
        assert result.status == "completed" and len(losses) == 34  # 1,078 images / 32
        assert np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5]), losses
        epoch = events.of(EpochMetrics)[0]
        assert epoch.val_acc > 0.5 and 0 < epoch.train_acc <= 1
        assert None not in (epoch.samples_per_s, epoch.eta, epoch.elapsed)
        streams[style] = losses
    assert np.allclose(streams["cell"], streams["functional"], rtol=1e-3, atol=1e-4)


def test_every_epoch_sees_a_new_order_and_the_loss_keeps_falling(folder, monkeypatch):
    """The orders the training loop really consumed: each epoch every training image once, in an order of its
    own; the same seed gives the same orders again (Re-run), another seed others."""
    orders = []
    real = MemoryBatches.epoch_order

    def recorded(self):
        orders.append(real(self))
        return orders[-1]
    monkeypatch.setattr(MemoryBatches, "epoch_order", recorded)
    cfg = TrainConfig(network="mlp", mode="graph", epochs=3, batch_size=64)
    events = EventLog()
    result = train(cfg, folder, [events])
    epochs = events.of(EpochMetrics)
    assert [e.epoch for e in epochs] == [1, 2, 3] and result.steps == 3 * 17
    assert epochs[2].train_loss < epochs[0].train_loss
    assert epochs[-1].eta == 0
    first_run = orders[:3]
    assert len(first_run) == 3 and all(sorted(o) == list(range(len(o))) for o in first_run)  # each image once
    assert len({tuple(o) for o in first_run}) == 3, "an epoch replayed another's order"
    train(cfg.with_(epochs=2), folder)
    assert [list(o) for o in orders[3:5]] == [list(o) for o in first_run[:2]]  # same seed: same orders
    train(cfg.with_(epochs=1, seed=cfg.seed + 1), folder)
    assert list(orders[5]) != list(first_run[0])


def test_each_epoch_records_its_confusion_matrix_on_the_validation_split(folder):
    """What the time-lapse plays: at each epoch's end the validation split's [true][predicted] counts, which add
    up to the split and whose diagonal is the epoch's validation accuracy."""
    cfg = TrainConfig(network="mlp", mode="graph", epochs=2, batch_size=64, val_fraction=0.1)
    events = EventLog()
    train(cfg, folder, [events])
    epochs = events.of(EpochMetrics)
    for e in epochs:
        m = np.asarray(e.val_confusion)
        assert m.shape == (10, 10) and m.sum() == 122  # a tenth of the 1,200 images, stratified by digit
        assert np.trace(m) / m.sum() == pytest.approx(e.val_acc)
    assert epochs[0].val_confusion != epochs[1].val_confusion
    no_split = EventLog()
    train(cfg.with_(epochs=1, val_fraction=0.0), folder, [no_split])
    assert no_split.of(EpochMetrics)[0].val_confusion is None


def test_early_stopping_restores_the_best_weights(folder):
    cfg = TrainConfig(network="mlp", mode="graph", optimizer="adam", learning_rate=0.01, epochs=30,
                      batch_size=32, val_fraction=0.2, early_stopping=True, patience=2)
    weights = {}

    class KeepWeights(Callback):
        def on_epoch_end(self, net, metrics):
            weights[metrics.epoch] = snapshot(net)
    result = train(cfg, folder, [KeepWeights()])
    assert result.status == "early_stopped", result.history
    last = result.history[-1].epoch
    assert result.best_epoch == last - 2
    val = [h.val_loss for h in result.history]
    assert val[result.best_epoch - 1] == min(val)
    final = snapshot(result.net)
    assert all(np.array_equal(final[k], weights[result.best_epoch][k]) for k in final)
    assert not all(np.array_equal(final[k], weights[last][k]) for k in final)


class ScriptedControl(Control):
    def __init__(self):
        self.pause, self.stop = threading.Event(), threading.Event()

    def paused(self):
        return self.pause.is_set()

    def stop_requested(self):
        return self.stop.is_set()


def test_pause_resume_and_stop_between_steps(folder):
    control, times = ScriptedControl(), {}

    class Script(Callback):
        def on_step(self, e):
            times[e.step] = time.monotonic()
            if e.step == 3:
                control.pause.set()
                threading.Timer(0.6, control.pause.clear).start()
            if e.step == 6:
                control.stop.set()

    cfg = TrainConfig(network="mlp", mode="pynative", epochs=2, batch_size=32)
    result = train(cfg, folder, [Script()], control)
    assert result.status == "stopped" and result.steps == 6 and "step 6" in result.message
    assert times[4] - times[3] >= 0.55  # it really waited while paused
    assert max(times) == 6


def test_paused_time_is_not_training_time(folder):
    """A 1.5 s pause inside epoch 1: the epoch's seconds, its samples/s and the steps' elapsed time leave it
    out (the wall clock does not)."""
    control = ScriptedControl()

    class PauseOnce(Callback):
        def on_step(self, e):
            if e.step == 3:
                control.pause.set()
                threading.Timer(1.5, control.pause.clear).start()

    events = EventLog()
    started = time.monotonic()
    train(TrainConfig(network="mlp", mode="pynative", epochs=1, batch_size=32), folder, [PauseOnce(), events],
          control)
    wall = time.monotonic() - started
    (epoch,) = events.of(EpochMetrics)
    steps = events.of(StepEvent)
    assert wall > 1.5 and epoch.epoch_seconds < wall - 1.4
    assert steps[3].elapsed - steps[2].elapsed < 0.5  # the step after the pause: no 1.5 s jump
    assert epoch.samples_per_s == pytest.approx(1078 / epoch.epoch_seconds, rel=1e-6)


def test_divergence_is_detected_and_stops_the_run(folder):
    cfg = TrainConfig(network="mlp", mode="graph", optimizer="sgd", learning_rate=10.0, epochs=3, batch_size=32)
    events = EventLog()
    result = train(cfg, folder, [events])
    assert result.status == "diverged" and result.diverged_at_step is not None
    assert result.steps == result.diverged_at_step and "Lower the learning rate" in result.message
    assert all(np.isfinite(_step_losses(events)))  # the bad loss is not published as a step


def test_batch_larger_than_the_data_is_refused(folder):
    with pytest.raises(ValueError, match="larger than the 1078 training images"):
        train(TrainConfig(network="mlp", batch_size=2000, epochs=1), folder)


def test_mixed_precision_trains_on_cpu(folder):
    cfg = TrainConfig(network="mlp", mode="graph", amp_level="O2", optimizer="adam", learning_rate=0.002,
                      batch_size=32, epochs=1)
    events = EventLog()
    result = train(cfg, folder, [events])
    losses = _step_losses(events)
    assert result.status == "completed" and np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5])
    assert result.history[0].val_acc > 0.7


def test_samples_per_second_counts_the_samples_of_every_timed_step(folder):
    events = EventLog()
    train(TrainConfig(network="mlp", mode="pynative", epochs=1, batch_size=500), folder, [events])
    steps = events.of(StepEvent)
    assert len(steps) == 3  # 1,078 images: 500, 500 and a last batch of 78
    # the first step (compilation) is not timed; the short last batch counts as 78 samples, not 500 or 0
    expected = (500 + 78) / (steps[1].step_seconds + steps[2].step_seconds)
    assert steps[2].samples_per_s == pytest.approx(expected, rel=1e-9)
