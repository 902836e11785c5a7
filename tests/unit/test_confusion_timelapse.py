"""The confusion matrix's time-lapse: each epoch's validation counts kept in the store (SQLite and PostgreSQL) and
read back as they were, one frame an epoch with its accuracy in the title, a slider and ▶ that play in the
browser alone, and the offline report that carries the frames (and stays under 1 MB)."""
from __future__ import annotations

import json
from html import unescape

import numpy as np

from core.app.confusion_timelapse import frames_of, timelapse_figure
from core.app.html_report import html_report
from core.data.idx import read_images
from core.config import TrainConfig
from core.training.events import EpochMetrics
from tests.unit.test_html_report import finished_run

BOTH_DATABASES = True


def counts(epoch: int) -> tuple[tuple[int, ...], ...]:
    """A matrix whose diagonal grows with the epoch: 10 images a digit, `epoch` of them read right."""
    m = np.zeros((10, 10), int)
    for d in range(10):
        m[d, d] = epoch
        m[d, (d + 1) % 10] = 10 - epoch
    return tuple(tuple(int(n) for n in row) for row in m)


def test_each_epochs_counts_come_back_from_the_store_as_they_went_in(store):
    run_id = store.create_run(TrainConfig(network="mlp"), name="lapse", source="cli", exclusive=False)
    for e in (1, 2, 3):
        store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1.0, train_acc=0.5, val_loss=1.0, val_acc=e / 10,
                                             val_confusion=counts(e)))
    store.add_epoch(run_id, EpochMetrics(epoch=4, train_loss=1.0, train_acc=0.5))  # no validation split
    back = store.epochs(run_id)
    assert [e.val_confusion for e in back] == [counts(1), counts(2), counts(3), None]
    frames = frames_of(back)
    assert [f.epoch for f in frames] == [1, 2, 3]
    assert [round(f.accuracy, 3) for f in frames] == [0.1, 0.2, 0.3]
    assert frames[2].counts[7, 7] == 3 and frames[2].counts[7, 8] == 7


def test_the_figure_has_a_frame_an_epoch_a_slider_and_play(store):
    frames = frames_of([EpochMetrics(epoch=e, train_loss=1, train_acc=1, val_confusion=counts(e)) for e in (3, 1, 2)])
    fig = timelapse_figure(frames, lambda f: f"epoch {f.epoch}: {f.accuracy:.0%}", "true", "predicted", "epoch",
                           "Play", "Pause")
    assert [f.name for f in fig.frames] == ["1", "2", "3"], "in epoch order"
    assert fig.layout.title.text == "epoch 3: 30%", "the last epoch shown first"
    assert [f.layout.title.text for f in fig.frames] == ["epoch 1: 10%", "epoch 2: 20%", "epoch 3: 30%"]
    assert [s.label for s in fig.layout.sliders[0].steps] == ["1", "2", "3"]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ Play", "⏸ Pause"]
    assert np.array_equal(np.asarray(fig.frames[0].data[0].text), np.asarray(counts(1)))
    zmax = {f.data[0].zmax for f in fig.frames}
    assert len(zmax) == 1, "one colour scale for every frame: a cell's colour means the same count throughout"


def test_the_report_carries_the_frames_and_stays_small(store):
    run_id, _ = finished_run(store, TrainConfig(network="mlp"), "lesson", epochs=0)
    for e in range(1, 11):
        store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1 / e, train_acc=0.8, val_loss=1 / e, val_acc=e / 10,
                                             val_confusion=counts(e)))
    html = html_report(store, [run_id])
    assert "The confusion matrix, epoch by epoch (validation split)" in html
    assert "frames: f.frames" in html and "Epoch 10: 100.0% of the validation images read right" in html
    spec = html[html.index("const f = ", html.index("id='timelapse'")) + len("const f = "):]
    figure = json.loads(spec[:spec.index("; Plotly.newPlot")])
    assert len(figure["frames"]) == 10
    assert len(html.encode()) < 1_000_000


def test_a_run_without_recorded_matrices_has_no_time_lapse_in_its_report(store):
    run_id, _ = finished_run(store, TrainConfig(network="mlp"), "older", epochs=3)
    assert "id='timelapse'" not in html_report(store, [run_id])


def test_a_lesson_file_replays_the_lesson_without_names_or_paths_under_one_megabyte(store, shared_mnist):
    """The class round's record: the base run and the class's fine-tune, the live change on the curves, each
    run's matrix epoch by epoch, the class's drawings by digit without names, and the before and after."""
    from core.app.html_report import LessonPart
    from core.runs.people.class_round import Lesson
    from core.runs.people.finetune import Score
    from core.runs.people.permissions import LOCAL
    from core.training.events import SettingEvent
    base, _ = finished_run(store, TrainConfig(network="mlp"), "the teacher's model", epochs=0)
    tuned, _ = finished_run(store, TrainConfig(network="mlp"), "the teacher's model + our handwriting", epochs=0)
    for run_id in (base, tuned):
        for e in range(1, 6):
            store.add_epoch(run_id, EpochMetrics(epoch=e, train_loss=1 / e, train_acc=0.8, val_loss=1 / e,
                                                 val_acc=e / 10, val_confusion=counts(e)))
    store.add_steps(base, [(i, 1 + i // 100, 2.0 / i, 0.01 * i) for i in range(5, 1000)], step=1000)
    store.add_setting_change(base, SettingEvent(step=300, setting="learning_rate", value=0.05))
    lesson = Lesson(store)
    round_ = lesson.open(LOCAL, store.existing(base), asked=None)
    images = read_images(shared_mnist / "test" / "t10k-images-idx3-ubyte")[:300]  # handwriting, as drawn
    for i, image in enumerate(images):  # a lesson of 30 students × 10 drawings
        lesson.send(round_, f"student-{i % 30:02d}", image, i % 10, i % 9)
    part = LessonPart(tuple(lesson.drawings(shown_only=True)), "test",
                      (Score("class_taught", 225, 0.80, 0.95), Score("class_held_out", 75, 0.78, 0.90),
                       Score("evaluation", 10_000, 0.981, 0.979)))
    html = html_report(store, [base, tuned], lesson=part)
    assert "The class's drawings (300)" in html and html.count('class="class-mosaic"') == 1
    assert html.count("<img ") == 300 and "student-" not in html, "every drawing, no student's name"
    said = unescape(html)
    assert "the class's drawings held out (75)" in said and "+12.0 points" in said and "the test split" in said
    assert '"text":"lr 0.05"' in html, "the live change marked on the curves"
    assert "id='timelapse'" in html and "id='timelapse-1'" in html, "each run's matrix epoch by epoch"
    assert str(store.root) not in html
    assert len(html.encode()) < 1_000_000, len(html.encode())
