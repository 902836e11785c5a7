"""The trainer's small pieces on their own: the step clock, the best epoch, early stopping, the step planner, and
how callbacks are called."""

import numpy as np
import pytest

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.model.network_build import build_network
from core.training.clock import StepClock, about
from core.training.early_stopping import BestEpoch, EarlyStopping
from core.training.events import Callback, CallbackList, EpochMetrics, EventLog, LogEvent, StepEvent
from core.training.run_control import Control
from core.training.resume_state import ResumeState
from core.training.step_planner import StepPlanner, Turn
from core.training.weight_arrays import snapshot
from tests.support.helpers import let_pass


def test_the_clock_times_steps_only_and_has_no_eta_before_the_first_timed_one():
    clock = StepClock(total_steps=10, already_elapsed=5.0)
    assert clock.elapsed() == pytest.approx(5.0, abs=0.1)  # a resumed run's earlier time counts
    assert clock.samples_per_s(0.5, 64) == 128  # nothing timed yet: this step's own rate
    assert clock.eta(1) is None  # the first step compiles: its time says nothing of the rest
    clock.record(0.2, 64)
    clock.record(0.3, 16)  # a short last batch counts as its own samples
    assert clock.samples_per_s(9.9, 999) == pytest.approx(80 / 0.5)
    assert clock.eta(3) == pytest.approx(0.25 * 7)
    assert clock.eta(3, delay_per_step=0.5) == pytest.approx(0.75 * 7)  # slow motion waits before every step
    let_pass(0.05, "the clock moves on")
    assert clock.elapsed() > 5.0


def test_a_time_left_reads_as_people_say_it_not_as_a_clock():
    assert [str(about(s)) for s in (None, 4, 23, 58, 100, 3599, 4000)] == [
        "estimating", "a few seconds", "about 25 s", "about 1 min", "about 2 min", "about 1 h", "about 1 h 7 min"]


def metrics(epoch, val_loss):
    return EpochMetrics(epoch=epoch, train_loss=1.0, train_acc=0.5, val_loss=val_loss, val_acc=0.5)


def test_the_best_epoch_is_the_lowest_validation_loss_so_far_and_a_resumed_run_keeps_it():
    best = BestEpoch()
    assert best.update(1, 0.5) and best.best_epoch == 1
    assert not best.update(2, 0.6) and not best.update(3, 0.5)  # equal is no improvement
    assert not best.update(4, None)  # no validation split: never "best"
    history = (metrics(1, 0.4), metrics(2, 0.3), metrics(3, 0.35))
    resumed = BestEpoch.for_run(ResumeState(epoch=3, step=30, weights={}, history=history))
    assert (resumed.best_epoch, resumed.best_val) == (2, 0.3) and not resumed.update(4, 0.31)


def test_early_stopping_is_a_callback_that_keeps_the_best_weights_and_sets_should_stop_after_patience():
    net = build_network("mlp")
    stopping = EarlyStopping.for_run(TrainConfig(early_stopping=True, patience=2), None)
    events = CallbackList([stopping])
    events.epoch_end(net, metrics(1, 0.5).with_(best=True))
    best = snapshot(net)
    for p in net.trainable_params():  # later epochs train the weights on
        p.set_data(p.data * 0)
    events.epoch_end(net, metrics(2, 0.6))
    assert events.stop_asked() is None
    events.epoch_end(net, metrics(3, 0.5))
    assert events.stop_asked() is stopping
    said = str(stopping.stop_message())
    assert "did not improve for 2 epochs" in said and "epoch 1" in said
    events.train_end(net, "early_stopped")
    assert all(np.array_equal(best[k], v) for k, v in snapshot(net).items())  # the best epoch's weights are back


def test_early_stopping_restores_nothing_after_a_divergence_and_is_absent_when_not_asked_for():
    net = build_network("mlp")
    stopping = EarlyStopping(patience=1)
    stopping.on_epoch_end(net, metrics(1, 0.5).with_(best=True))
    for p in net.trainable_params():
        p.set_data(p.data * 0)
    stopping.on_train_end(net, "diverged")
    assert all(not v.any() for v in snapshot(net).values())
    assert EarlyStopping.for_run(TrainConfig(early_stopping=False), None) is None


def test_early_stopping_picks_up_a_resumed_runs_best_epoch():
    history = (metrics(1, 0.4), metrics(2, 0.3), metrics(3, 0.35))
    resume = ResumeState(epoch=3, step=30, weights={}, history=history, best_weights={"w": np.zeros(1)})
    stopping = EarlyStopping.for_run(TrainConfig(early_stopping=True, patience=2), resume)
    assert (stopping.best_epoch, stopping.bad_epochs) == (2, 1)
    stopping.on_epoch_end(None, metrics(4, 0.31))
    assert stopping.should_stop and "w" in stopping.best_weights


def test_callbacks_get_each_event_in_its_own_method_in_order():
    seen = []

    class Steps(Callback):
        def on_step(self, e):
            seen.append(("step", e.step))

        def on_epoch_end(self, net, m):
            seen.append(("saved", m.epoch))

    log = EventLog()
    events = CallbackList([Steps(), None, log])
    step = StepEvent(step=1, epoch=1, loss=0.5, step_seconds=0.1, samples_per_s=640, elapsed=0.1, eta=1.0,
                     total_steps=10)
    events.emit(step)
    events.log("hello")
    events.epoch_end(None, metrics(1, 0.5))
    assert seen == [("step", 1), ("saved", 1)]
    assert log == [step, LogEvent("hello")] and log.of(StepEvent) == [step]


def test_a_failing_display_is_reported_but_a_failing_recorder_ends_the_run(caplog):
    class Display(Callback):
        critical = False

        def on_log(self, e):
            raise RuntimeError("terminal gone")

    class Recorder(Callback):
        def on_log(self, e):
            raise OSError("disk full")

    after = EventLog()
    CallbackList([Display(), after]).log("x")
    assert after == [LogEvent("x")]  # the others still got it
    (record,) = [r for r in caplog.records if "Display failed" in r.getMessage()]
    assert record.levelname == "ERROR" and "terminal gone" in str(record.exc_info[1])
    with pytest.raises(OSError, match="disk full"):
        CallbackList([Recorder(), after]).log("y")


def test_a_failing_display_is_said_on_stderr_where_nothing_configures_logging():
    """The library logs; a process that configures no logging (a worker, a command line) still shows the
    failure and its traceback on stderr, which the run's log file keeps."""
    import subprocess
    import sys
    script = ("from core.training.events import Callback, CallbackList\n"
              "class Display(Callback):\n"
              "    critical = False\n"
              "    def on_log(self, e):\n"
              "        raise RuntimeError('terminal gone')\n"
              "CallbackList([Display()]).log('x')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "callback Display failed (training goes on)" in done.stderr
    assert "RuntimeError: terminal gone" in done.stderr


def test_an_empty_validation_split_says_why(tmp_path, small_mnist):
    """One image with val_fraction 0.1 has no validation image: the message must not claim val_fraction 0."""
    import shutil

    from core.data.folders import validate_mnist_dir
    from core.data.idx import read_images, read_labels, write_idx
    from core.model.evaluation import evaluation_set
    one = tmp_path / "one"
    (one / "train").mkdir(parents=True)
    src = small_mnist / "train"
    write_idx(read_images(src / "train-images-idx3-ubyte")[:1], read_labels(src / "train-labels-idx1-ubyte")[:1],
              one / "train" / "train-images-idx3-ubyte", one / "train" / "train-labels-idx1-ubyte")
    folder = validate_mnist_dir(one)
    with pytest.raises(ValueError, match="0.1 of the 1 training images rounds to no image") as e:
        evaluation_set(folder, "validation", 0.1)
    assert "val_fraction 0)" not in str(e.value)
    with pytest.raises(ValueError, match="used no validation split"):
        evaluation_set(folder, "validation", 0.0)
    shutil.rmtree(one)


@pytest.mark.parametrize("keeps_normalised", [True, False])
def test_batches_from_memory_are_the_pipelines_batches_in_another_order(small_mnist, monkeypatch, keeps_normalised):
    """Runs without augmentation train on MemoryBatches: per epoch, every chosen image exactly once, normalised
    bit for bit as MindSpore's pipeline does it, with its label; the last batch smaller, as the pipeline's.
    Both ways: a split that fits NORMALISED_LIMIT keeps its images normalised by the first epoch for the next
    ones; a larger one normalises every batch again."""
    import mindspore as ms  # noqa: F401  # deferred: MindSpore (this module's other tests need none)
    from core.data import memory_batches
    from core.data.folders import validate_mnist_dir
    from core.data.memory_batches import MemoryBatches
    from core.data.pipeline import create_dataset
    if not keeps_normalised:
        monkeypatch.setattr(memory_batches, "NORMALISED_LIMIT", 100 * 28 * 28 * 4 - 1)  # one byte short of 100
    folder = validate_mnist_dir(small_mnist)
    chosen = np.arange(3, 203, 2)  # 100 of the split's images
    memory = MemoryBatches(folder, "train", chosen, 32, seed=7)
    assert memory.keeps_normalised == keeps_normalised and not memory.all_normalised
    pipeline = create_dataset(folder, "train", chosen, 32, shuffle=False)
    assert memory.get_dataset_size() == pipeline.get_dataset_size() == 4
    want = [(x.asnumpy(), y.asnumpy()) for x, y in pipeline.create_tuple_iterator(num_epochs=1)]
    want_x, want_y = np.concatenate([x for x, _ in want]), np.concatenate([y for _, y in want])
    key = lambda x: x.reshape(len(x), -1).tobytes()  # noqa: E731
    as_rows = lambda x, y: sorted(key(x[i:i + 1]) + bytes([int(y[i])]) for i in range(len(y)))  # noqa: E731
    orders = []
    for epoch in (1, 2):  # the second from the kept images when they are kept
        got = [(x.asnumpy(), y.asnumpy()) for x, y in memory]
        assert [len(y) for _, y in got] == [32, 32, 32, 4]
        assert memory.all_normalised == keeps_normalised
        got_x, got_y = np.concatenate([x for x, _ in got]), np.concatenate([y for _, y in got])
        assert got_x.dtype == want_x.dtype and got_y.dtype == want_y.dtype == np.int32
        assert as_rows(got_x, got_y) == as_rows(want_x, want_y), epoch  # the same (image, label) pairs, bit for bit
        assert not np.array_equal(got_y, want_y)  # ... in a shuffled order
        orders.append(got_y)
    assert not np.array_equal(*orders)  # a new order each epoch


class _Rates:
    """LiveValues' two questions, without an optimizer: a replayed change at `change_at`."""

    def __init__(self, change_at=None):
        self.change_at = change_at

    def before_step(self, step, control):
        return []

    def next_change(self, step):
        return self.change_at if self.change_at is not None and self.change_at >= step else None


class _Lesson(Control):
    def __init__(self, fine=False, stop=False):
        self.fine, self.stop = fine, stop

    def fine_grained(self):
        return self.fine

    def stop_requested(self):
        return self.stop


def planner(control=None, change_at=None, validate_every=0, compiled=("single",)):
    return StepPlanner(control or _Lesson(), _Rates(change_at), CallbackList(), StepClock(100), k=4,
                       validate_every=validate_every, validates=True, compiled=set(compiled))


def test_the_step_planner_says_how_many_steps_the_next_call_takes():
    assert planner().next_turn(0, 20) == Turn(4)
    assert planner(compiled=()).next_turn(0, 20) == Turn(1)  # the session's first call compiles a single step
    assert planner().next_turn(16, 20) == Turn(1)  # the epoch's last step must be a call of its own
    assert planner().next_turn(15, 20) == Turn(4)
    assert planner().next_turn(20, 20) == Turn(0)  # the epoch's steps are all taken
    assert planner(_Lesson(fine=True)).next_turn(0, 20) == Turn(1)  # Step ×n or slow motion under way
    assert planner(change_at=3).next_turn(0, 20) == Turn(1)  # a replayed rate change inside the call
    assert planner(change_at=5).next_turn(0, 20) == Turn(4)
    assert planner(validate_every=6).next_turn(4, 20) == Turn(1)  # a validation after step 6 falls inside
    assert planner(validate_every=6).next_turn(6, 20) == Turn(4)
    assert planner(validate_every=6).validation_due(6, 20) and not planner(validate_every=6).validation_due(5, 20)
    assert planner(_Lesson(stop=True)).next_turn(0, 20) == Turn(0, stop=True)


def test_validation_batches_are_as_even_as_can_be_so_that_one_graph_reads_them(shared_mnist):
    """In Graph mode every batch shape is a graph compiled: the bundled data's 500 validation images go in two
    batches of 250 (not 256 and 244), and a split that no batch count divides keeps batches within one image."""
    from core.data.folders import validate_mnist_dir
    from core.training.build import even_batch, prepare_data
    assert (even_batch(500, 256), even_batch(256, 256), even_batch(512, 256), even_batch(513, 256)) == (250, 256, 256, 171)
    assert (even_batch(120, 256), even_batch(0, 256)) == (120, 256)
    config = TrainConfig(network="mlp", data_dir=str(shared_mnist))
    data = prepare_data(config, validate_mnist_dir(config.data_dir), None, seed=config.seed)
    shapes = [tuple(images.shape) for images, _ in data.validation.create_tuple_iterator(num_epochs=1)]
    assert data.validation_images == 500 and shapes == [(250, 1, 28, 28)] * 2


def test_a_run_starts_on_a_settled_heap_so_that_each_compilation_collects_only_what_is_new():
    """MindSpore runs a full garbage collection before each graph it compiles; seed_run, at every run's start,
    collects once and freezes what is alive (core.runtime.settle_heap), so that those collections scan only what
    the run made since. release_heap (a warm worker between runs) makes everything collectable again."""
    import gc

    from core.runtime import release_heap
    from core.training.build import seed_run
    release_heap()
    assert gc.get_freeze_count() == 0
    seed_run(TrainConfig(network="mlp"), 0)
    frozen = gc.get_freeze_count()
    assert frozen > 50_000, "the modules this process loaded and what it holds"
    assert len(gc.get_objects()) < frozen / 20, "what a collection still scans"
    release_heap()
    assert gc.get_freeze_count() == 0


def test_a_process_prepared_for_mindspore_imports_it_without_a_full_garbage_collection():
    """core.runtime.prepare_process raises the collector's thresholds (GC_THRESHOLDS): importing MindSpore and the
    worker's modules took ~460 collections, full ones among them, at Python's defaults."""
    import subprocess
    import sys
    code = ("import gc, sys\n"
            "from core.runtime import GC_THRESHOLDS, prepare_process\n"
            "prepare_process('mlp')\n"
            "runs = []\n"
            "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'stop' else None)\n"
            "import mindspore, core.runs.worker.execute, core.training.loop\n"
            "print(gc.get_threshold() == GC_THRESHOLDS, len(runs), runs.count(2))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    same, collections, full = done.stdout.split()
    assert same == "True" and int(collections) < 50 and int(full) == 0, done.stdout
