"""A lesson's training controls on real MindSpore: the MLP's shape, the learning rate changed while it trains
(and replayed by a re-run), validation every N steps, Step (n steps, then pause) and slow motion."""
from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from core.config import ConfigError, TrainConfig, field_text, parse_field
from core.data.folders import validate_mnist_dir
from core.model.network_build import count_parameters, network_for
from core.networks import network_spec
from core.runs.people.actions import history
from core.runs.worker.execute import execute
from core.training.run_control import Control
from core.training.events import EventLog, SettingEvent, StepEvent, ValidationEvent
from core.training.loop import train
from core.training.steps import Stepper
from core.training.weight_arrays import snapshot
from tests.support.apptest import page
from tests.support.helpers import let_pass, wait_for


def lesson_config(small_mnist, **changes) -> TrainConfig:
    settings = dict(network="mlp", hidden=(64, 64), mode="pynative", epochs=1, batch_size=32, data_dir=str(small_mnist))
    return TrainConfig(**{**settings, **changes})


def test_the_mlp_takes_the_shape_it_is_given_and_counts_its_parameters():
    assert count_parameters(network_for(TrainConfig(network="mlp", hidden=(64, 64)))) == 784 * 64 + 64 + 64 * 64 + 64 + 64 * 10 + 10
    assert count_parameters(network_for(TrainConfig(network="mlp", hidden=()))) == 784 * 10 + 10
    assert count_parameters(network_for(TrainConfig(network="mlp"))) == 784 * 512 + 512 + 512 * 512 + 512 + 5130
    assert parse_field("hidden", "128, 32") == (128, 32) and field_text("hidden", (128, 32)) == "128,32"
    with pytest.raises(ConfigError, match="layer widths"):
        parse_field("hidden", "64;64")
    assert "hidden" in TrainConfig(network="mlp", hidden=(64,) * 7).errors()


class AskOnce(Control):
    """Asks for live settings before a given step, as the Train page does through the store."""

    def __init__(self, step: int, learning_rate: float | None = None, **settings: float):
        self.at, self.steps = step, 0
        self.settings = settings if learning_rate is None else {"learning_rate": learning_rate, **settings}

    def setting_requests(self):
        self.steps += 1
        return dict(self.settings) if self.steps == self.at else {}


@pytest.mark.parametrize("mode,style", [("pynative", "cell"), ("graph", "functional")])
def test_a_learning_rate_asked_for_mid_run_is_used_from_the_next_step_and_a_rerun_replays_it(small_mnist, mode, style):
    config = lesson_config(small_mnist, mode=mode, style=style, learning_rate=0.01, optimizer="sgd")
    folder = validate_mnist_dir(config.data_dir)
    live_events = EventLog()
    live = train(config, folder, [live_events], AskOnce(step=6, learning_rate=0.2))
    changes = live_events.of(SettingEvent)
    assert changes == [SettingEvent(6, "learning_rate", pytest.approx(0.2))]
    replay_events = EventLog()
    replay = train(config.with_(setting_changes=((6, "learning_rate", 0.2),)), folder, [replay_events])
    assert replay_events.of(SettingEvent) == [SettingEvent(6, "learning_rate", pytest.approx(0.2), replayed=True)]
    unchanged = train(config, folder)
    a, b, c = snapshot(live.net), snapshot(replay.net), snapshot(unchanged.net)
    assert all(np.array_equal(a[k], b[k]) for k in a), "the re-run must replay the change exactly"
    assert any(not np.allclose(a[k], c[k]) for k in a), "a 20x learning rate from step 6 must change the weights"


@pytest.mark.parametrize("setting,value", [("momentum", 0.0), ("weight_decay", 0.05)])
@pytest.mark.parametrize("mode,style", [("graph", "cell"), ("graph", "functional")])
def test_momentum_and_weight_decay_asked_for_mid_run_act_from_the_next_step_and_a_rerun_replays_them(
        small_mnist, setting, value, mode, style):
    """Each optimizer knob of core/live_settings.py changes the very next step: the live run equals a re-run that
    replays the change at step 6, and differs from one without it and from one that changes a step later."""
    config = lesson_config(small_mnist, mode=mode, style=style, learning_rate=0.05, optimizer="momentum",
                           momentum=0.9, weight_decay=0.0, steps_per_call=1)
    folder = validate_mnist_dir(config.data_dir)
    live_events = EventLog()
    live = train(config, folder, [live_events], AskOnce(step=6, **{setting: value}))
    assert live_events.of(SettingEvent) == [SettingEvent(6, setting, pytest.approx(value))]
    replay = train(config.with_(setting_changes=((6, setting, value),)), folder)
    later = train(config.with_(setting_changes=((7, setting, value),)), folder)
    unchanged = train(config, folder)
    a, b, c, d = (snapshot(r.net) for r in (live, replay, later, unchanged))
    assert all(np.array_equal(a[k], b[k]) for k in a), "the re-run must replay the change exactly"
    assert any(not np.allclose(a[k], c[k], rtol=0, atol=1e-7) for k in a), "a step later is another run"
    assert any(not np.allclose(a[k], d[k], rtol=0, atol=1e-7) for k in a), f"{setting} {value} must change the weights"


def test_validation_every_n_steps_gives_a_curve_within_one_epoch(small_mnist):
    events = EventLog()
    result = train(lesson_config(small_mnist, validate_every=10), validate_mnist_dir(str(small_mnist)), [events])
    steps = result.steps  # 1,080 training images / 32 -> 34 steps
    points = events.of(ValidationEvent)
    assert [p.step for p in points] == [10, 20, 30, steps]
    assert all(0 <= p.val_acc <= 1 and np.isfinite(p.val_loss) for p in points)
    assert points[-1].val_acc == pytest.approx(result.history[-1].val_acc)


def test_step_slow_motion_and_a_new_learning_rate_through_the_run_store(store, small_mnist):
    run_id = store.create_run(lesson_config(small_mnist, epochs=50), name="lesson")
    store.request(run_id, "pause")  # paused before its first step, as a teacher would prepare it
    worker = threading.Thread(target=execute, args=(store, run_id), daemon=True)
    worker.start()
    wait_for(lambda: store.get(run_id).status == "paused", what="the run to pause")
    assert store.get(run_id).step == 0

    assert store.ask(run_id, "step", 7).code == "requested"
    wait_for(lambda: store.get(run_id).status == "paused" and store.get(run_id).step > 0, what="7 steps")
    let_pass(0.5, "no step beyond the 7 asked for")
    assert store.get(run_id).step == 7, "Step trains exactly the steps asked for, then pauses"

    assert store.ask(run_id, "learning_rate", 0.05).code == "requested"
    assert store.ask(run_id, "learning_rate", 0).code == "bad_value"
    let_pass(0.6, "the paused worker reads its requests (every 0.2 s) and keeps the rate for its next step")
    assert store.requests(run_id).asked == {"learning_rate": pytest.approx(0.05)}, "asked until a step takes it"
    store.ask(run_id, "step", 3)
    wait_for(lambda: store.get(run_id).status == "paused" and store.get(run_id).step == 10, what="3 more steps")
    assert store.setting_changes(run_id) == [SettingEvent(8, "learning_rate", pytest.approx(0.05))]
    assert store.requests(run_id).asked == {}, "the worker took both requests"

    assert store.ask(run_id, "step_delay", 0.25).code == "requested"
    store.request(run_id, "resume")
    wait_for(lambda: store.get(run_id).status == "running", what="resume")
    start_step = store.get(run_id).step
    let_pass(2.0, "slow motion's rate is measured over it")
    store.request(run_id, "pause")
    wait_for(lambda: store.get(run_id).status == "paused", what="pause in slow motion")
    taken = store.get(run_id).step - start_step
    assert 3 <= taken <= 2.5 / 0.25 + 1, f"slow motion at 0.25 s per step took {taken} steps in ~2 s"
    store.request(run_id, "stop")
    worker.join(60)
    run = store.get(run_id)
    assert run.status == "stopped"
    assert run.epoch < 2 and not worker.is_alive()
    steps = store.steps(run_id)
    assert [s.step for s in steps] == list(range(1, run.step + 1)), "no step lost or repeated by pausing"


def test_a_rerun_replays_the_changes_a_run_made_and_a_resume_forgets_those_after_its_checkpoint(store):
    config = TrainConfig(network="mlp", hidden=(32,), setting_changes=((5, "learning_rate", 0.02),))
    run_id = store.create_run(config, exclusive=False)
    store.add_steps(run_id, [(s, 1 if s <= 10 else 2, 1.0, s * 0.1) for s in range(1, 16)])
    store.add_setting_change(run_id, SettingEvent(5, "learning_rate", 0.02, replayed=True))
    store.add_setting_change(run_id, SettingEvent(8, "learning_rate", 0.3))
    store.add_setting_change(run_id, SettingEvent(8, "momentum", 0.5))
    store.add_setting_change(run_id, SettingEvent(12, "learning_rate", 0.1))
    assert store.replay_config(run_id).setting_changes == (
        (5, "learning_rate", 0.02), (8, "learning_rate", 0.3), (8, "momentum", 0.5), (12, "learning_rate", 0.1))
    assert store.replay_config(run_id).hidden == (32,)
    store.truncate_after(run_id, 1)  # resumed from epoch 1's checkpoint (step 10): step 12's change is gone
    assert store.replay_config(run_id).setting_changes == (
        (5, "learning_rate", 0.02), (8, "learning_rate", 0.3), (8, "momentum", 0.5))


def test_pacing_requests_are_refused_with_a_reason(store):
    done = store.create_run(TrainConfig(), exclusive=False)
    store.finish(done, "completed")
    assert store.ask(done, "step", 5).code == "finished"
    parallel = store.create_run(TrainConfig(workers=2), exclusive=False)
    assert store.ask(parallel, "step", 5).code == "not_parallel"
    assert store.ask(parallel, "learning_rate", 0.1).code == "not_parallel"
    assert store.ask(parallel, "momentum", 0.5).code == "not_parallel"
    assert store.ask(parallel, "step_delay", 0.5).code == "requested"  # slow motion needs no agreement
    assert store.ask(parallel, "step_delay", 60).code == "bad_value"
    assert store.ask(parallel, "step", 0).code == "bad_value"
    assert store.ask("no-such-run", "learning_rate", 0.1).code == "gone"
    adam = store.create_run(TrainConfig(optimizer="adam"), exclusive=False)
    assert store.ask(adam, "momentum", 0.5).code == "bad_value", "Adam has no momentum to change"
    assert store.ask(adam, "weight_decay", 2.0).code == "bad_value"
    assert store.ask(adam, "weight_decay", 1e-3).code == "requested"
    sgd = store.create_run(TrainConfig(optimizer="sgd"), exclusive=False)
    assert store.ask(sgd, "weight_decay", 1e-3).code == "bad_value", "nn.SGD takes no live weight decay"
    assert store.requests(adam).asked == {"weight_decay": pytest.approx(1e-3)}
    with pytest.raises(KeyError, match="no live setting 'beta'; known: learning_rate, momentum"):
        store.ask(adam, "beta", 0.5)


def test_a_rate_applied_and_a_step_clicked_together_ask_for_the_rate_first_and_a_bad_rate_takes_no_step(store):
    """The Train page's Apply and Step act in their callbacks: both clicks in one page run ask for the rate, then
    the steps (the store's history in that order); a rate that is not one says why and takes no steps."""
    run_id = store.create_run(TrainConfig(network="mlp"), name="lesson", source="cli")
    store.update(run_id, status="paused", request="pause", heartbeat=time.time(), step=40, total_steps=213, epoch=1)
    at = page("train")
    at.number_input(key="step_n").set_value(5)
    at.text_input(key=f"live_learning_rate_{run_id}").input("0.05")
    at.button(key="apply_lr").click()
    at.button(key="step").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    run, asked = store.get(run_id), store.requests(run_id).asked
    assert asked == {"learning_rate": pytest.approx(0.05), "step": 5} and run.request == "run"
    assert [h.action for h in reversed(history(store))] == ["learning_rate", "step"]
    assert [toast.value for toast in at.toast] == ["Learning-rate change requested.", "Step requested."]

    store.take(run_id, "learning_rate", asked["learning_rate"])
    store.take(run_id, "step", 5)
    store.update(run_id, request="pause")
    at.text_input(key=f"live_learning_rate_{run_id}").input("fast")
    at.button(key="apply_lr").click()
    at.button(key="step").click()
    at.run()
    assert any("fast" in e.value for e in at.error), [e.value for e in at.error]
    run = store.get(run_id)
    assert store.requests(run_id).asked == {} and run.request == "pause"
    store.finish(run_id, "stopped", "test over")


@pytest.mark.parametrize("extra", [{}, {"validate_every": 10, "setting_changes": ((13, "learning_rate", 0.05),)},
                                   {"optimizer": "adam", "weight_decay": 1e-3, "lr_schedule": "cosine"}])
def test_k_steps_per_graph_call_train_exactly_what_one_step_per_call_trains(small_mnist, extra):
    """Graph mode, Cell style: 8 steps per call give the same losses and weights, bit for bit, as one per call,
    also when validations and a replayed learning-rate change fall where a group would have been, and with an
    optimizer that reads and writes more state (Adam's moments and powers, weight decay, a scheduled rate).
    The K-step graph is compiled without MindSpore's copies of the weights it reads (core.runtime.LOAD_COPIES):
    a reader ordered after the optimizer's write would change the weights."""
    config = lesson_config(small_mnist, mode="graph", epochs=2, **extra)
    folder = validate_mnist_dir(config.data_dir)
    runs = {}
    for k in (1, 8):
        events = EventLog()
        runs[k] = (train(config.with_(steps_per_call=k), folder, [events]), events)
    (one, one_events), (eight, eight_events) = runs[1], runs[8]
    assert [s.loss for s in one_events.of(StepEvent)] == [s.loss for s in eight_events.of(StepEvent)]
    assert one_events.of(ValidationEvent) == eight_events.of(ValidationEvent)
    a, b = snapshot(one.net), snapshot(eight.net)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    steps = eight_events.of(StepEvent)
    assert len({s.step_seconds for s in steps[1:9]}) == 1, "steps 2-9 were one call (equal shares of its time)"
    assert steps[0].step_seconds != steps[1].step_seconds, "the first step alone: it shows sooner"
    assert len({s.step_seconds for s in one_events.of(StepEvent)[1:9]}) > 1


def counted(calls: dict[str, int], name: str, method):
    """method, counting its calls in calls[name]."""
    def counting(self, *args):
        calls[name] += 1
        return method(self, *args)
    return counting


def test_k_fits_the_epoch_so_that_its_only_single_step_is_the_last(small_mnist, monkeypatch):
    """Unless set, K is chosen for the epoch's length: 1,080 images in batches of 30 are 36 steps, 35 before the
    last (a single step: it returns the gradients) are 5 calls of 7, where K = 8 would take 4 calls and leave 3
    single steps; 70 are 5 calls of 14, 64 are 4 of 16. A run too short for the K-step graph's compilation to pay
    back (fewer steps than its network's k_steps_from) takes one step per call, unless its graphs were compiled
    ahead (a warm worker's prepared model)."""
    config = lesson_config(small_mnist, mode="graph", epochs=2, batch_size=30)
    long = config.with_(epochs=network_spec("mlp").k_steps_from)  # a step per epoch would be enough
    assert long.steps_per_call == 0 and long.steps_per_call_for(False, 36) == 7
    assert long.steps_per_call_for(False, 71) == 14 and long.steps_per_call_for(False, 65) == 16
    assert long.steps_per_call_for(False, 845) == 15  # 844 before the last: 56 calls of 15 and 4 single steps
    assert config.with_(steps_per_call=5).steps_per_call_for(False, 36) == 5
    assert long.with_(mode="pynative").steps_per_call_for(False, 36) == 1
    assert long.steps_per_call_for(True, 36) == 1
    assert config.steps_per_call_for(False, 36) == 1, "72 steps: the K-step graph's compilation would not pay"
    assert config.steps_per_call_for(False, 36, compiled_ahead=True) == 7
    assert config.with_(epochs=2).steps_per_call_for(False, network_spec("mlp").k_steps_from // 2) > 1
    calls = {"single": 0, "with gradients": 0, "K steps": 0}
    monkeypatch.setattr(Stepper, "__call__", counted(calls, "single", Stepper.__call__))
    monkeypatch.setattr(Stepper, "with_grads", counted(calls, "with gradients", Stepper.with_grads))
    monkeypatch.setattr(Stepper, "multi", counted(calls, "K steps", Stepper.multi))
    short = EventLog()
    train(config, validate_mnist_dir(config.data_dir), [short])
    assert len(short.of(StepEvent)) == 72
    assert calls == {"single": 70, "with gradients": 2, "K steps": 0}, "a short run: every step its own call"
    events = EventLog()
    train(config.with_(steps_per_call=7), validate_mnist_dir(config.data_dir), [events])
    second = [s for s in events.of(StepEvent) if s.epoch == 2]
    assert len(second) == 36
    calls = [len(list(group)) for _, group in itertools.groupby(s.step_seconds for s in second)]
    assert calls == [7] * 5 + [1], calls  # a call's steps share its time equally


def test_the_first_step_reaches_the_store_at_once_even_right_after_the_compile_phase(store):
    """A viewer who pressed Start waits for it; the next call may compile for seconds (K steps per call)."""
    from core.runs.worker.recording import StoreRecorder
    from core.training.events import PhaseEvent
    run_id = store.create_run(TrainConfig(), exclusive=False)
    recorder = StoreRecorder(store, run_id)
    recorder.on_phase(PhaseEvent("training", first_step_seconds=0.6))  # flushes, as the trainer's order has it
    recorder.on_step(StepEvent(step=1, epoch=1, loss=2.3, step_seconds=0.6, samples_per_s=100.0, elapsed=0.6,
                               eta=10.0, total_steps=70))
    assert [s.step for s in store.steps(run_id)] == [1] and store.get(run_id).step == 1
    recorder.on_step(StepEvent(step=2, epoch=1, loss=2.2, step_seconds=0.01, samples_per_s=100.0, elapsed=0.61,
                               eta=10.0, total_steps=70))
    assert [s.step for s in store.steps(run_id)] == [1], "later steps are batched as before"


def test_a_run_started_paused_in_slow_motion_waits_before_its_first_step_then_steps_slowly(store, small_mnist):
    """Configure's "Start paused" and slow motion (and a link's start=paused&delay=0.5): the run waits at step 0
    for the teacher's Step, and its steps then come at the slow pace."""
    from core.runs.rows import StartPace
    from core.runs.run_queue import RunQueue
    run_id = RunQueue(store).submit(lesson_config(small_mnist, epochs=20), "slow start", "dashboard", "teacher",
                                    pace=StartPace(paused=True, step_delay=0.5))
    queued = store.get(run_id)
    assert (queued.request, queued.step_delay) == ("pause", 0.5)
    worker = threading.Thread(target=execute, args=(store, run_id), daemon=True)
    worker.start()
    wait_for(lambda: store.get(run_id).status == "paused", what="the run to start paused", timeout=120)
    let_pass(1.0, "a run started paused takes no step")
    assert store.get(run_id).step == 0, "a run started paused takes no step until asked"
    started = time.monotonic()
    store.ask(run_id, "step", 3)
    wait_for(lambda: store.get(run_id).step == 3 and store.get(run_id).status == "paused", what="3 slow steps")
    assert time.monotonic() - started >= 3 * 0.5 - 0.1, "each step waited its slow-motion delay"
    store.request(run_id, "stop")
    worker.join(60)
    assert store.get(run_id).status == "stopped"
