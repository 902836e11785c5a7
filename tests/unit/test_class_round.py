"""A class round's rules, on SQLite and a real PostgreSQL: the asked digit is every drawing's label, a drawing
carries the student's display name alone, only members open, hide and end (never the class link's viewers), one
drawing in four is held out of the fine-tune, hidden ones are neither shown nor taught, everything is wiped at
End lesson or 12 hours after it was made, and nothing of it is copied or exported with names."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from core.config import TrainConfig
from core.data.idx import read_images, read_labels
from core.messages import Explained
from core.runs.people.class_round import (HELD_OUT_EVERY, KEEP_S, MAX_EACH, Lesson, counts, split, teach)
from core.runs.people.permissions import LOCAL, NotAllowed, Person
from core.runs.store import RunStore
from core.runs.store.copy import copy_store
from core.runs.store.database import sqlite_url
from core.app.mosaic import mosaic_html

BOTH_DATABASES = True

TEACHER = Person("Teacher")
STUDENT = Person("student-ab12cd", viewer=True)


def digit(value: int) -> np.ndarray:
    """A distinct 28×28 image per value."""
    image = np.zeros((28, 28), np.uint8)
    image[4 + value % 20, 4:24] = 255
    image[4:24, 4 + value // 20 % 20] = 200
    return image


def a_run(store: RunStore) -> object:
    return store.get(store.create_run(TrainConfig(network="mlp", epochs=1), name="the class's model",
                                      status="completed", exclusive=False))


def test_a_round_labels_every_drawing_with_the_asked_digit_and_counts_the_readings(store):
    lesson = Lesson(store)
    assert lesson.current() is None
    round_ = lesson.open(TEACHER, a_run(store), asked=7)
    assert round_.open and round_.asked == 7 and round_.started_by == "Teacher"
    lesson.send(round_, STUDENT.ident, digit(1), label=3, read_as=7)  # the asked 7, whatever a phone said
    lesson.send(round_, STUDENT.ident, digit(2), label=7, read_as=1)
    lesson.send(round_, "student-ef34", digit(3), label=7, read_as=7)
    sent = lesson.drawings()
    assert [d.label for d in sent] == [7, 7, 7]
    assert [(c.digit, c.drawings, c.read_right) for c in counts(sent)] == [(7, 3, 2)]
    assert [d.id for d in lesson.drawings(student=STUDENT.ident)] == [sent[0].id, sent[1].id]
    assert np.array_equal(sent[2].image, digit(3))


def test_a_free_round_takes_each_students_digit_and_refuses_one_that_is_not(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=None)
    lesson.send(round_, STUDENT.ident, digit(1), label=4, read_as=4)
    with pytest.raises(Explained):
        lesson.send(round_, STUDENT.ident, digit(2), label=12, read_as=4)
    with pytest.raises(ValueError):
        lesson.send(round_, STUDENT.ident, np.zeros((28, 28), np.float32), label=4, read_as=4)
    assert [d.label for d in lesson.drawings()] == [4]


def test_only_members_open_hide_and_end_and_an_ended_round_takes_nothing(store):
    lesson = Lesson(store)
    run = a_run(store)
    with pytest.raises(NotAllowed):
        lesson.open(STUDENT, run, asked=1)
    first = lesson.open(LOCAL, run, asked=1)
    drawing = lesson.send(first, STUDENT.ident, digit(1), 1, 1)
    for act in (lambda: lesson.hide(STUDENT, drawing.id), lambda: lesson.end(STUDENT, first),
                lambda: lesson.end_lesson(STUDENT)):
        with pytest.raises(NotAllowed):
            act()
    second = lesson.open(TEACHER, run, asked=2)  # opening a round ends the one before
    assert [r.open for r in lesson.rounds()] == [False, True]
    with pytest.raises(Explained, match="ended"):
        lesson.send(first, STUDENT.ident, digit(2), 1, 1)
    lesson.end(TEACHER, second)
    with pytest.raises(Explained, match="ended"):
        lesson.send(second, STUDENT.ident, digit(3), 2, 2)
    assert len(lesson.drawings()) == 1


def test_one_student_sends_at_most_max_each_drawings_a_round(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=5)
    for i in range(MAX_EACH):
        lesson.send(round_, STUDENT.ident, digit(i), 5, 5)
    with pytest.raises(Explained, match=str(MAX_EACH)):
        lesson.send(round_, STUDENT.ident, digit(99), 5, 5)
    lesson.send(round_, "student-other", digit(98), 5, 5)  # the others still may


def test_one_drawing_in_four_is_held_out_and_hidden_ones_are_neither_shown_nor_taught(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=0)
    sent = [lesson.send(round_, f"student-{i % 3}", digit(i), 0, 0) for i in range(9)]
    taught, held = split(lesson.drawings())
    assert [d.id for d in held] == [sent[1].id, sent[5].id]
    assert len(taught) + len(held) == 9 and not set(d.id for d in taught) & set(d.id for d in held)
    assert HELD_OUT_EVERY == 4
    lesson.hide(TEACHER, sent[0].id)
    taught, held = split(lesson.drawings())
    assert sent[0].id not in {d.id for d in taught + held}
    assert [d.id for d in lesson.drawings(shown_only=True)][0] == sent[1].id
    lesson.hide(TEACHER, sent[0].id, hidden=False)
    assert len(lesson.drawings(shown_only=True)) == 9


def test_nothing_to_teach_says_so_before_any_run_starts(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=3)
    started = []
    with pytest.raises(Explained, match="No drawings to teach"):
        teach(store, round_, a_run(store), lesson.drawings(), lambda *a, **k: started.append(a) or "x")
    assert started == []


def test_end_lesson_wipes_everything_and_twelve_hours_wipe_it_by_themselves(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=3)
    for i in range(3):
        lesson.send(round_, STUDENT.ident, digit(i), 3, 3)
    assert Lesson(store, now=lambda: round_.started + KEEP_S - 60).drawings() != []
    later = Lesson(store, now=lambda: round_.started + KEEP_S + 60)
    assert later.rounds() == [] and later.drawings() == []
    round_ = lesson.open(TEACHER, a_run(store), asked=4)
    lesson.send(round_, STUDENT.ident, digit(5), 4, 4)
    assert lesson.end_lesson(TEACHER) == 1
    assert lesson.rounds() == [] and lesson.drawings() == []


def test_the_export_holds_the_shown_drawings_and_their_digits_and_no_names(store, tmp_path):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=None)
    kept = lesson.send(round_, STUDENT.ident, digit(1), 2, 2)
    gone = lesson.send(round_, STUDENT.ident, digit(2), 8, 3)
    lesson.hide(TEACHER, gone.id)
    with zipfile.ZipFile(io.BytesIO(lesson.export_idx())) as z:
        z.extractall(tmp_path)
        raw = b"".join(z.read(n) for n in z.namelist())
    folder = tmp_path / "class-handwriting" / "train"
    images = read_images(folder / "train-images-idx3-ubyte")
    labels = read_labels(folder / "train-labels-idx1-ubyte")
    assert images.shape == (1, 28, 28) and np.array_equal(images[0], kept.image) and list(labels) == [2]
    assert STUDENT.ident.encode() not in raw


def test_a_store_copy_leaves_the_lessons_drawings_behind(store, tmp_path):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=1)
    lesson.send(round_, STUDENT.ident, digit(1), 1, 1)
    target = RunStore(tmp_path / "copy", sqlite_url(tmp_path / "copy" / "runs.sqlite"))
    report = copy_store(store, target)
    assert report.matches and "class_drawings" not in report.counts
    assert Lesson(target).drawings() == [] and Lesson(target).rounds() == []


def test_the_mosaic_is_a_row_a_digit_with_every_shown_drawing_and_names_escaped(store):
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=None)
    for i, (label, read) in enumerate(((7, 7), (7, 1), (2, 2))):
        lesson.send(round_, "<b>Ann</b>", digit(i), label, read)
    shown = lesson.drawings()
    html = mosaic_html(shown, counts(shown), lambda c: f"{c.digit}: {c.drawings}", lambda d: f"#{d.id}")
    assert html.count("<img ") == 3 and html.count('data-digit="') == 2
    assert html.index('data-digit="2"') < html.index('data-digit="7"')
    assert "<b>Ann</b>" not in html and "&lt;b&gt;Ann&lt;/b&gt;" in html
    assert html.count("#e74c3c") == 1, "the one read wrongly, in red"


def test_a_digits_row_shows_its_newest_drawings_up_to_the_cap(store):
    from core.app.mosaic import MAX_TILES
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=4)
    for i in range(MAX_TILES + 2):
        lesson.send(round_, f"student-{i}", digit(i), 4, 4)
    shown = lesson.drawings()
    html = mosaic_html(shown, counts(shown), lambda c: f"{c.digit}: {c.drawings}", lambda d: f"#{d.id}!")
    assert html.count("<img ") == MAX_TILES and f"4: {MAX_TILES + 2}" in html
    assert f"#{shown[-1].id}!" in html and f"#{shown[0].id}!" not in html, "the newest, not the oldest"


def test_the_dispatcher_wipes_a_lesson_twelve_hours_old_though_nobody_opens_it_again(store, monkeypatch):
    from core.runs.launch.dispatcher import Dispatcher
    from core.runs.store import class_records
    lesson = Lesson(store)
    round_ = lesson.open(TEACHER, a_run(store), asked=1)
    made_at = class_records.time.time() - KEEP_S - 60
    with monkeypatch.context() as m:
        m.setattr(class_records.time, "time", lambda: made_at)
        lesson.send(round_, STUDENT.ident, digit(1), 1, 1)
    lesson.send(round_, STUDENT.ident, digit(2), 1, 1)  # made now: kept
    dispatcher = Dispatcher(store, spawn=lambda *_: None)
    dispatcher.tick()
    assert [np.array_equal(d.image, digit(2)) for d in lesson.drawings()] == [True]
