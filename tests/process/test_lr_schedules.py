"""Learning-rate schedules on real MindSpore: their shapes, that a run follows its schedule step by step (also
K steps per graph call), that a change made while it trains replaces the schedule's tail, and that a resumed
run picks the schedule up where it stopped."""
from __future__ import annotations

import numpy as np
import pytest

from core.config import LR_SCHEDULES, TrainConfig, parse_field
from core.data.folders import validate_mnist_dir
from core.model.lr_schedules import planned_rates, schedule, steps_per_epoch
from core.training.events import EventLog, StepEvent
from core.training.loop import train
from core.training.weight_arrays import snapshot
from tests.process.test_teaching import AskOnce, lesson_config


def test_each_schedule_has_its_shape():
    c = TrainConfig(learning_rate=0.1, epochs=4)
    shapes = {k: np.array(schedule(c.with_(lr_schedule=k), 25)) for k in LR_SCHEDULES if k != "constant"}
    assert schedule(c, 25) is None
    assert all(len(r) == 100 for r in shapes.values())
    step = shapes["step"]
    assert step[0] == pytest.approx(0.1) and step[50] == pytest.approx(0.01) and step[99] == pytest.approx(0.001)
    cos = shapes["cosine"]
    assert cos[0] == pytest.approx(0.1) and cos[-1] < 0.001 and np.all(np.diff(cos) <= 0)
    warm = shapes["warmup_cosine"]
    assert warm[0] == pytest.approx(0.01) and warm.argmax() <= 10 and warm.max() == pytest.approx(0.1)
    one = shapes["one_cycle"]
    assert one[0] < 0.005 and 28 <= one.argmax() <= 30 and one[-1] < 1e-4
    assert parse_field("lr_schedule", "cosine") == "cosine"
    assert "lr_schedule" in TrainConfig(lr_schedule="linear").errors()


def test_a_change_replaces_the_rest_of_the_schedule_and_steps_per_epoch_follow_the_split():
    c = TrainConfig(learning_rate=0.1, epochs=2, lr_schedule="cosine", setting_changes=((5, "learning_rate", 0.5),))
    rates = planned_rates(c, 10)
    assert rates[3] == pytest.approx(schedule(c, 10)[3]) and np.all(rates[4:] == 0.5)
    assert steps_per_epoch(TrainConfig(batch_size=64, val_fraction=0.1), 5000) == 71  # 4,500 images / 64
    assert steps_per_epoch(TrainConfig(batch_size=64, val_fraction=0.0, workers=2), 5000) == 79  # 2,500 / 32


@pytest.mark.parametrize("kind", ["cosine", "one_cycle"])
def test_a_run_follows_its_schedule_step_by_step_also_with_k_steps_per_graph_call(small_mnist, kind):
    """The schedule inside the graph trains the same weights as the same rates set one by one before each step
    (the store's replayed changes); 8 steps per call the same as 1."""
    config = lesson_config(small_mnist, mode="graph", optimizer="sgd", learning_rate=0.2, lr_schedule=kind)
    folder = validate_mnist_dir(config.data_dir)
    events = EventLog()
    scheduled = train(config.with_(steps_per_call=8), folder, [events])
    per_epoch = len(events.of(StepEvent))
    one_by_one = tuple((i + 1, "learning_rate", float(np.float32(r))) for i, r in enumerate(schedule(config, per_epoch)))
    single = train(config.with_(steps_per_call=1), folder)
    replayed = train(config.with_(lr_schedule="constant", setting_changes=one_by_one, steps_per_call=1), folder)
    constant = train(config.with_(lr_schedule="constant"), folder)
    a, b, c, d = (snapshot(r.net) for r in (scheduled, single, replayed, constant))
    assert all(np.array_equal(a[k], b[k]) for k in a), "K steps per call must follow the schedule exactly"
    # A constant rate passes through the optimizer as lr + 1 - 1 in float32: equal to rounding, not bit for bit.
    assert all(np.allclose(a[k], c[k], rtol=1e-4, atol=1e-6) for k in a)
    assert any(not np.allclose(a[k], d[k], rtol=1e-2, atol=1e-4) for k in a), "the schedule must change training"


def test_a_live_change_under_a_schedule_holds_from_its_step(small_mnist):
    config = lesson_config(small_mnist, mode="pynative", optimizer="sgd", learning_rate=0.1, lr_schedule="cosine")
    folder = validate_mnist_dir(config.data_dir)
    live = train(config, folder, control=AskOnce(step=6, learning_rate=0.02))
    events = EventLog()
    train(config, folder, [events])
    per_epoch = len(events.of(StepEvent))
    rates = schedule(config, per_epoch)
    same = tuple((i + 1, "learning_rate", float(np.float32(r))) for i, r in enumerate(rates[:5]))
    replayed = train(config.with_(lr_schedule="constant", setting_changes=same + ((6, "learning_rate", 0.02),)),
                     folder)
    a, b = snapshot(live.net), snapshot(replayed.net)
    assert all(np.allclose(a[k], b[k], rtol=1e-4, atol=1e-6) for k in a)


def test_a_resumed_run_continues_its_schedule_where_it_stopped():
    from core.model.network_build import network_for
    from core.model.optim import build_optimizer
    from core.training.live_values import LiveValues
    from core.training.run_control import NoControl
    config = TrainConfig(network="mlp", hidden=(8,), learning_rate=0.1, epochs=3, lr_schedule="cosine")
    optimizer = build_optimizer(config, network_for(config).trainable_params(), steps_per_epoch=10)
    rates = LiveValues(optimizer, ((25, "learning_rate", 0.5),), first_step=11)
    assert rates.current() == pytest.approx(schedule(config, 10)[10])
    rates.before_step(11, NoControl())
    resumed_late = LiveValues(build_optimizer(config, network_for(config).trainable_params(), 10),
                              ((25, "learning_rate", 0.5),), first_step=27)
    assert resumed_late.current() == pytest.approx(0.5), "a change before the checkpoint stays in force"


def test_configure_offers_the_schedules_draws_the_chosen_one_and_keeps_it_in_the_link(store):
    from tests.support.apptest import page
    at = page("configure", {"lr_schedule": "one_cycle", "epochs": "3"})
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="cfg_lr_schedule").value == "one_cycle"
    assert at.session_state["config"].lr_schedule == "one_cycle"
    assert any("learning rate at each step" in c.value and "213 steps" in c.value for c in at.caption)  # 71 × 3
    at.selectbox(key="cfg_lr_schedule").select("constant").run()
    assert "lr_schedule" not in at.query_params and not any("learning rate at each step" in c.value for c in at.caption)
    at.selectbox(key="cfg_lr_schedule").select("step").run()
    assert at.query_params["lr_schedule"] == "step"


def test_the_live_view_says_the_rate_of_the_next_step_under_a_schedule():
    from core.runs.rows import Run
    from core.training.events import SettingEvent
    from ui.curves import History
    from ui.schedule_view import current_learning_rate
    config = TrainConfig(learning_rate=0.1, epochs=2, lr_schedule="step")
    run = Run(id="r", name="r", source="cli", config=config, status="running", message="", request="", created=0,
              started=0, finished=None, heartbeat=None, pid=None, phase="training", step=60, total_steps=100, epoch=2,
              samples_per_s=None, eta=None, best_val_acc=None, best_val_loss=None, best_epoch=None, checkpoint=None)
    empty = History(steps=[], epochs=[], validations=[], setting_changes=[], steps_per_epoch=50)
    assert current_learning_rate(run, empty) == pytest.approx(0.01)   # step 61 of 100: after half, before 3/4
    changed = History(steps=[], epochs=[], validations=[],
                      setting_changes=[SettingEvent(40, "momentum", 0.5), SettingEvent(40, "learning_rate", 0.3)],
                      steps_per_epoch=50)
    assert current_learning_rate(run, changed) == pytest.approx(0.3)


def test_the_best_5k_preset_button_fills_the_form_and_the_link(store):
    from core.presets import PRESETS
    from tests.support.apptest import page
    at = page("configure")
    at.text_input(key="cfg_epochs").input("3").run()
    at.button(key="preset_best_5k").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["config"] == PRESETS["best-5k"]
    assert at.text_input(key="cfg_epochs").value == "50" and at.selectbox(key="cfg_lr_schedule").value == "one_cycle"
    assert at.query_params["lr_schedule"] == "one_cycle" and at.query_params["loss"] == "label_smoothing"


def test_the_command_line_takes_a_preset_and_options_override_it():
    from core.options import config_from_args
    from core.cli.train import build_parser
    config = config_from_args(build_parser().parse_args(["--preset", "best-5k", "--epochs", "3", "--network", "lenet5"]))
    assert (config.epochs, config.lr_schedule, config.loss, config.val_fraction) == (3, "one_cycle", "label_smoothing", 0.0)
    assert config_from_args(build_parser().parse_args(["--lr-schedule", "cosine"])).lr_schedule == "cosine"
    assert config_from_args(build_parser().parse_args([])) == TrainConfig()


def test_the_command_lines_help_names_the_schedules_and_the_preset():
    from tests.support.helpers import cli
    p = cli("core.cli.train", "--help")
    assert p.returncode == 0, p.stderr
    assert "--lr-schedule" in p.stdout and "one_cycle" in p.stdout and "--preset" in p.stdout and "--no-wait" in p.stdout
