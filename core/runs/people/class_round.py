"""A class round: the teacher asks for a digit (or lets each student choose), the class's phones send drawings,
the model reads each one, and "Teach it our handwriting" fine-tunes the model on them as an ordinary run, with a
part of them held out to show before and after.

Privacy by default: a drawing carries the student's display name and nothing else of them; the lesson's rounds
and drawings are wiped at End lesson, or by themselves 12 hours after they were made, and leave the store only
when the teacher exports them (as MNIST IDX files, without names)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.config import TrainConfig
from core.messages import ExplainedValueError
from core.runs.people import finetune
from core.runs.people.handwriting import idx_zip
from core.runs.people.permissions import Person
from core.runs.rows import ClassDrawingRow, ClassRoundRow, Run
from core.runs.store import RunStore
from core.runs.store.class_records import KEEP_S
from core.runs.store.roles import ClassStore

__all__ = ["ClassDrawing", "Round", "Lesson", "Reading", "DigitCount", "counts", "split", "teach", "readings",
           "class_scores", "KEEP_S", "MAX_EACH", "MAX_DRAWINGS", "HELD_OUT_EVERY", "ROUND_NAME_SUFFIX"]

MAX_EACH = 30            # a student's drawings in one round: enough to play, too few to flood the projector
MAX_DRAWINGS = 3_000     # a lesson's: 30 students × 100
HELD_OUT_EVERY = 4       # one drawing in four (the 2nd, 6th, 10th … sent) stays out of the fine-tune
ROUND_NAME_SUFFIX = "our handwriting"


@dataclass(frozen=True)
class ClassDrawing:
    id: int
    round_id: int
    student: str           # display name, nothing else
    image: np.ndarray      # uint8 (28, 28): what the network saw
    label: int             # the digit asked for, or the one the student said
    read_as: int | None    # what the round's model read it as
    hidden: bool           # hidden by the teacher: not shown, not taught
    created: float

    @property
    def read_right(self) -> bool:
        return self.read_as == self.label

    @classmethod
    def of(cls, row: ClassDrawingRow) -> "ClassDrawing":
        return cls(row.id, row.round_id, row.student, np.frombuffer(row.image, np.uint8).reshape(28, 28).copy(),
                   row.label, row.read_as, bool(row.hidden), row.created)


@dataclass(frozen=True)
class Round:
    id: int
    asked: int | None      # None: each student says which digit they drew
    run_id: str            # the model that reads the drawings
    started_by: str
    started: float
    ended: float | None
    finetune_run: str | None
    held_out: tuple[int, ...]

    @property
    def open(self) -> bool:
        return self.ended is None

    @classmethod
    def of(cls, row: ClassRoundRow) -> "Round":
        return cls(row.id, row.asked, row.run_id, row.started_by, row.started, row.ended, row.finetune_run,
                   tuple(json.loads(row.held_out)) if row.held_out else ())


@dataclass(frozen=True)
class DigitCount:
    digit: int
    drawings: int
    read_right: int


class Lesson:
    """The class rounds of the store's lesson (one lesson per store at a time)."""

    def __init__(self, store: ClassStore, now: Callable[[], float] = time.time):
        self.store, self.now = store, now

    def rounds(self) -> list[Round]:
        """Oldest first; what is older than KEEP_S is wiped first."""
        rounds = [Round.of(r) for r in self.store.class_rounds()]
        cutoff = self.now() - KEEP_S
        if rounds and rounds[0].started < cutoff:
            self.store.wipe_class(before=cutoff)
            rounds = [Round.of(r) for r in self.store.class_rounds()]
        return rounds

    def current(self) -> Round | None:
        """The open round, else the last one (its mosaic and fine-tune stay on screen until the next)."""
        rounds = self.rounds()
        return rounds[-1] if rounds else None

    def open(self, person: Person, run: Run, asked: int | None) -> Round:
        person.check("class_round")
        if asked is not None and not 0 <= asked <= 9:
            raise ExplainedValueError("drawing_label", label=asked)
        self.store.open_class_round(asked, run.id, person.ident)
        found = self.current()
        assert found is not None
        return found

    def end(self, person: Person, round_: Round) -> None:
        person.check("class_round")
        self.store.end_class_round(round_.id)

    def end_lesson(self, person: Person) -> int:
        """Wipe every round and drawing; how many drawings went."""
        person.check("class_round")
        return self.store.wipe_class()

    def send(self, round_: Round, student: str, image: np.ndarray, label: int, read_as: int | None) -> ClassDrawing:
        """A student's drawing into the open round (the asked digit is its label when one was asked)."""
        image = np.asarray(image)
        if image.shape != (28, 28) or image.dtype != np.uint8:
            raise ValueError(f"a drawing is a 28×28 uint8 image, not {image.dtype} {image.shape}")
        label = round_.asked if round_.asked is not None else int(label)
        if not 0 <= label <= 9:
            raise ExplainedValueError("drawing_label", label=label)
        drawing_id = self.store.add_class_drawing(round_.id, student, image.tobytes(), label, read_as, MAX_EACH,
                                                  MAX_DRAWINGS)
        return ClassDrawing(drawing_id, round_.id, student, image, label, read_as, False, self.now())

    def drawings(self, student: str | None = None, shown_only: bool = False) -> list[ClassDrawing]:
        """The lesson's drawings in the order sent (one student's when given; without hidden ones on request)."""
        found = [ClassDrawing.of(r) for r in self.store.class_drawings(student)]
        return [d for d in found if not d.hidden] if shown_only else found

    def hide(self, person: Person, drawing_id: int, hidden: bool = True) -> None:
        person.check("class_round")
        self.store.hide_class_drawing(drawing_id, hidden)

    def export_idx(self) -> bytes:
        """The shown drawings as an MNIST training split in a zip (images and digits, no names)."""
        shown = self.drawings(shown_only=True)
        images = np.stack([d.image for d in shown]) if shown else np.zeros((0, 28, 28), np.uint8)
        return idx_zip(images, np.array([d.label for d in shown], np.uint8), "class-handwriting")


def counts(drawings: list[ClassDrawing]) -> list[DigitCount]:
    """Per digit that has drawings: how many, and how many the model read right."""
    by_digit: dict[int, list[ClassDrawing]] = {}
    for d in drawings:
        by_digit.setdefault(d.label, []).append(d)
    return [DigitCount(digit, len(ds), sum(d.read_right for d in ds)) for digit, ds in sorted(by_digit.items())]


def split(drawings: list[ClassDrawing]) -> tuple[list[ClassDrawing], list[ClassDrawing]]:
    """(taught, held out) of the shown drawings: one in HELD_OUT_EVERY, in the order sent, from the second on, is
    held out, so two drawings already leave one to compare on."""
    shown = [d for d in drawings if not d.hidden]
    held = [d for i, d in enumerate(shown) if i % HELD_OUT_EVERY == 1]
    return [d for d in shown if d not in held], held


def teach(store: RunStore, round_: Round, base: Run, drawings: list[ClassDrawing],
          start: Callable[..., str]) -> str:
    """"Teach it our handwriting": fine-tune `base` on the class's shown drawings less those held out, as an
    ordinary run started by `start(config, name=, source=)` (a person's Actions.start); its id."""
    taught, held = split(drawings)
    if not taught:
        raise ExplainedValueError("class_nothing_to_teach")
    made = finetune.plan(store, base, taught, for_class=True)
    run_id = start(made.config, name=f"{base.name} + {ROUND_NAME_SUFFIX}"[:80], source=finetune.SOURCE)
    store.keep_class_finetune(round_.id, run_id, json.dumps([d.id for d in held]))
    return run_id


@dataclass(frozen=True)
class Reading:
    """One drawing as the round's model read it when it was sent, and as the class's fine-tune reads it."""
    drawing: ClassDrawing
    after: int | None      # None: no fine-tune has finished yet
    held_out: bool         # left out of the fine-tune: it shows what the model learnt, not what it memorised

    @property
    def before(self) -> int | None:
        return self.drawing.read_as


def readings(predict: Callable[[str, np.ndarray], np.ndarray], after: str | None, drawings: list[ClassDrawing],
             held_out: tuple[int, ...]) -> list[Reading]:
    """Each drawing with its reading after the fine-tune whose checkpoint is `after` (None: not trained yet)."""
    if not drawings or after is None:
        return [Reading(d, None, d.id in held_out) for d in drawings]
    then = predict(after, np.stack([d.image for d in drawings])).argmax(1)
    return [Reading(d, int(a), d.id in held_out) for d, a in zip(drawings, then, strict=True)]


def class_scores(predict: Callable[[str, np.ndarray], np.ndarray], made: finetune.FineTune, tuned_checkpoint: str,
                 base_config: TrainConfig, drawings: list[ClassDrawing],
                 held_out: tuple[int, ...]) -> tuple[str, list[finetune.Score]]:
    """Accuracy before and after on the drawings taught, on those held out, and on the base run's evaluation
    split; (the split's name or "none", the scores)."""
    def arrays(ds: list[ClassDrawing]) -> tuple[np.ndarray, np.ndarray]:
        if not ds:
            return np.zeros((0, 28, 28), np.uint8), np.zeros(0, np.uint8)
        return np.stack([d.image for d in ds]), np.array([d.label for d in ds], np.uint8)
    taught_ids = set(made.drawing_ids)
    evaluation = finetune.evaluation_split(base_config)
    split_name, images, labels = evaluation or ("none", np.zeros((0, 28, 28), np.uint8), np.zeros(0, np.uint8))
    groups = {"class_taught": arrays([d for d in drawings if d.id in taught_ids]),
              "class_held_out": arrays([d for d in drawings if d.id in held_out]),
              "evaluation": (images, labels)}
    return split_name, finetune.scores(predict, made.base_checkpoint, tuned_checkpoint, groups)
