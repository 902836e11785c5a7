"""A warm worker's model, built and compiled before its run exists (core.training.prepared): the run that takes
it trains exactly what a run on a model built for it trains, and only a run of the same graphs takes it."""
from __future__ import annotations

import numpy as np
import pytest

from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.training import prepared
from core.training.build import prepare_data
from core.training.events import EventLog, PhaseEvent, StepEvent
from core.training.loop import train
from core.training.weight_arrays import snapshot


@pytest.fixture(autouse=True)
def nothing_prepared():
    prepared._READY.clear()
    yield
    prepared._READY.clear()


def run(config: TrainConfig):
    events = EventLog()
    result = train(config, validate_mnist_dir(config.data_dir), [events])
    return result, events


def prepare_for(config: TrainConfig) -> None:
    data = prepare_data(config, validate_mnist_dir(config.data_dir), None, seed=config.seed)
    prepared.prepare(config, data.steps_per_epoch)


@pytest.mark.parametrize("network", ["lenet5", "mlp"])
def test_a_run_on_the_prepared_model_trains_what_a_run_on_its_own_model_trains(small_mnist, network):
    """The warm worker prepared the defaults (the bundled 5,000 images, another seed and learning rate): the
    run's own data, seed and rate still decide, bit for bit, and its first call does not compile."""
    config = TrainConfig(network=network, epochs=1, data_dir=str(small_mnist), seed=3, learning_rate=0.02)
    own, own_events = run(config)
    prepare_for(config.with_(seed=99, learning_rate=0.01, data_dir=None))
    assert config.network in prepared._READY
    assert prepared._READY[config.network][2].step.k > 1, "compiled ahead: K steps per call, for a run of any length"
    taken, taken_events = run(config)
    assert config.network not in prepared._READY, "the run took the prepared model"
    assert [s.loss for s in taken_events.of(StepEvent)] == [s.loss for s in own_events.of(StepEvent)]
    a, b = snapshot(own.net), snapshot(taken.net)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    first_call = [p.first_step_seconds for p in taken_events.of(PhaseEvent) if p.first_step_seconds is not None]
    compiled_then = [p.first_step_seconds for p in own_events.of(PhaseEvent) if p.first_step_seconds is not None]
    print(f"first call: {first_call[0]:.3f} s on the prepared model, {compiled_then[0]:.3f} s compiling")
    assert first_call[0] < compiled_then[0] / 3, "the prepared model's first call compiled again"


def test_a_run_of_other_graphs_builds_its_own_model_and_leaves_the_prepared_one(small_mnist):
    config = TrainConfig(network="mlp", epochs=1, data_dir=str(small_mnist))
    prepare_for(config)
    for other in (config.with_(batch_size=32), config.with_(hidden=(64,)), config.with_(optimizer="adam"),
                  config.with_(lr_schedule="cosine", learning_rate=0.05)):
        assert prepared.graph_settings(other) != prepared.graph_settings(config)
    _, events = run(config.with_(batch_size=32))
    assert "mlp" in prepared._READY, "a batch of 32 is another graph: the prepared model stays for its run"
    assert len(events.of(StepEvent)) > 0
    assert prepared.graph_settings(config.with_(seed=5, epochs=3, validate_every=10, learning_rate=0.1)) == \
        prepared.graph_settings(config)


def test_a_learning_rate_schedule_is_taken_only_for_the_same_steps_per_epoch(small_mnist):
    """A schedule's graph holds every step's rate: prepared for the bundled images' epochs, it does not fit a run
    on 1,200 images."""
    config = TrainConfig(network="mlp", epochs=1, data_dir=str(small_mnist), lr_schedule="cosine")
    prepare_for(config.with_(data_dir=None))
    run(config)
    assert "mlp" in prepared._READY, "another number of steps per epoch: the run built its own model"


def test_a_learning_rate_schedule_is_taken_only_for_the_same_number_of_epochs(small_mnist):
    """A schedule spans the run: prepared for one epoch, its rates end where a two-epoch run is half done."""
    config = TrainConfig(network="mlp", epochs=2, data_dir=str(small_mnist), lr_schedule="cosine")
    assert prepared.graph_settings(config) != prepared.graph_settings(config.with_(epochs=1))
    prepare_for(config.with_(epochs=1))
    run(config)
    assert "mlp" in prepared._READY, "another number of epochs: the run built its own model"
    assert prepared.graph_settings(config.with_(lr_schedule="constant")) == \
        prepared.graph_settings(config.with_(lr_schedule="constant", epochs=1)), "a constant rate: epochs do not count"

