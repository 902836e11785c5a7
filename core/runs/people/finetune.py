"""Fine-tune a trained model on a person's handwriting: a short run, through the normal run machinery (live,
stoppable, recorded), from the model's checkpoint, on its own training images plus the person's drawings
repeated so that they count; then each model's accuracy before and after, on the drawings it trained on, on
drawings added since (held out) and on the evaluation split."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from core.config import TrainConfig
from core.data.folders import SPLIT_FILES, MnistFolder, load_arrays, stratified_split, validate_mnist_dir
from core.data.idx import write_idx
from core.messages import ExplainedValueError
from core.runs.ids import new_run_id
from core.runs.rows import Run
from core.runs.worker.start_weights import run_reference
from core.runs.store import RunStore

__all__ = ["FineTune", "Score", "plan", "evaluation_split", "scores", "find", "SOURCE"]

SOURCE = "finetune"
EPOCHS = 2
LR_FACTOR = 0.2         # of the base run's learning rate, decayed along a cosine: small moves from good weights
DRAWING_SHARE = 0.05    # the drawings' copies make about this share of the training images (bench/finetune_cost.py:
                        # 0.1 gained 3.5 points more on held-out drawings and cost 0.14 more on the test set)
MAX_COPIES = 50
PLAN_FILE = "finetune.json"


@dataclass(frozen=True)
class FineTune:
    """What a fine-tune run was made from (kept beside its data, so a reload shows the same comparison)."""
    base_run: str
    base_checkpoint: str
    drawing_ids: tuple[int, ...]
    copies: int
    config: TrainConfig
    for_class: bool = False  # on a class round's drawings (core/runs/people/class_round.py), not one person's

    def save(self, folder: Path) -> None:
        (folder / PLAN_FILE).write_text(json.dumps({"base_run": self.base_run, "base_checkpoint": self.base_checkpoint,
                                                    "drawing_ids": list(self.drawing_ids), "copies": self.copies,
                                                    "for_class": self.for_class}))

    @classmethod
    def of(cls, run: Run) -> "FineTune | None":
        """The plan of a fine-tune run (None: not one, or its data folder is gone)."""
        if run.source != SOURCE or not run.config.data_dir:
            return None
        try:
            d = json.loads((Path(run.config.data_dir) / PLAN_FILE).read_text())
        except (OSError, ValueError):
            return None
        return cls(d["base_run"], d["base_checkpoint"], tuple(d["drawing_ids"]), d["copies"], run.config,
                   bool(d.get("for_class", False)))


@dataclass(frozen=True)
class Score:
    """One group of images read by the model before and after fine-tuning."""
    group: str            # drawings | held_out | evaluation
    n: int
    before: float         # accuracy
    after: float | None   # None: the fine-tune has no checkpoint yet


class LabelledDrawing(Protocol):
    """What a fine-tune needs of a drawing: a person's (handwriting.Drawing) or a class's (class_round)."""
    @property
    def id(self) -> int: ...
    @property
    def image(self) -> np.ndarray: ...
    @property
    def label(self) -> int: ...


def plan(store: RunStore, base: Run, drawings: Sequence[LabelledDrawing], for_class: bool = False) -> FineTune:
    """Write the fine-tune's data folder in the store and return its plan (start it with launcher.start)."""
    if not drawings:
        raise ExplainedValueError("no_drawings")
    base_checkpoint = store.checkpoint_file(base)
    if base_checkpoint is None:
        raise ExplainedValueError("finetune_no_checkpoint", name=base.name)
    folder = validate_mnist_dir(base.config.data_dir)
    images, labels = _training_images(folder, base.config.val_fraction)
    copies = int(min(MAX_COPIES, max(1, round(DRAWING_SHARE * len(images) / len(drawings)))))
    mine = np.stack([d.image for d in drawings])
    mine_labels = np.array([d.label for d in drawings], np.uint8)
    out = store.root / "finetune" / new_run_id()
    (out / "train").mkdir(parents=True)
    write_idx(np.concatenate([images, np.tile(mine, (copies, 1, 1))]),
              np.concatenate([labels, np.tile(mine_labels, copies)]),
              *(out / "train" / name for name in SPLIT_FILES["train"]))
    if folder.has_test:  # the fine-tuned run is evaluated on the same test split
        shutil.copytree(folder.split_dir("test"), out / "test")
    base_config = base.config
    config = base_config.with_(
        data_dir=str(out), init_checkpoint=run_reference(base.id), epochs=EPOCHS, val_fraction=0.0,
        early_stopping=False, learning_rate=base_config.learning_rate * LR_FACTOR, lr_schedule="cosine",
        setting_changes=(), validate_every=0, workers=1).validate()
    made = FineTune(base.id, base_checkpoint, tuple(d.id for d in drawings), copies, config, for_class)
    made.save(out)
    return made


def _training_images(folder: MnistFolder, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """The base folder's training images; without a test split, less the validation images (they are the
    evaluation split then, and must stay unseen)."""
    images, labels = load_arrays(folder, "train")
    if folder.has_test:
        return images, labels
    train_idx, _ = stratified_split(labels, val_fraction)
    return images[train_idx], labels[train_idx]


def evaluation_split(base_config: TrainConfig) -> tuple[str, np.ndarray, np.ndarray] | None:
    """(split, images, labels) the models are compared on: the base folder's test split when it has one,
    else the base run's validation split; None when the base run trained on every image of a folder without
    a test split (nothing is left unseen to compare on)."""
    folder = validate_mnist_dir(base_config.data_dir)
    images, labels = load_arrays(folder, "test" if folder.has_test else "train")
    if folder.has_test:
        return "test", images, labels
    _, val_idx = stratified_split(labels, base_config.val_fraction)
    if len(val_idx) == 0:
        return None
    return "validation", images[val_idx], labels[val_idx]


def scores(predict: Callable[[str, np.ndarray], np.ndarray], before: str, after: str | None,
           groups: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[Score]:
    """Accuracy of the checkpoints before and after on each group of (images, labels); predict(checkpoint,
    images) gives class probabilities."""
    out = []
    for group, (images, labels) in groups.items():
        if len(images) == 0:
            continue
        def accuracy(ckpt: str, images: np.ndarray = images, labels: np.ndarray = labels) -> float:
            return float((predict(ckpt, images).argmax(1) == labels).mean())
        out.append(Score(group, len(images), accuracy(before), accuracy(after) if after else None))
    return out


def find(store: RunStore, model: Run) -> tuple[Run, FineTune] | None:
    """The newest fine-tune of model on a person's handwriting, or model itself when it is one (a class's
    fine-tunes are the class round's: core/runs/people/class_round.py)."""
    own = FineTune.of(model)
    if own is not None and not own.for_class:
        return model, own
    for run in store.list_runs():  # newest first
        made = FineTune.of(run)
        if made is not None and made.base_run == model.id and not made.for_class:
            return run, made
    return None
