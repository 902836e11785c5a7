"""A person's handwriting set and fine-tuning on it, on real MindSpore: drawings kept, listed, deleted and
exported as IDX; a fine-tune run starts from the model's weights, trains on its data plus the drawings
repeated, and reads the drawings better afterwards."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from core.app import model_service
from core.data.folders import load_arrays, validate_mnist_dir
from core.data.idx import read_images, read_labels
from core.messages import ExplainedValueError
from core.runs.people import finetune
from core.runs.worker.execute import execute
from core.runs.people.handwriting import HandwritingSet
from core.training.events import EventLog, StepEvent


def test_drawings_are_kept_listed_deleted_and_exported_as_mnist_idx(store):
    mine = HandwritingSet(store)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    ids = [mine.add(images[i], label=i + 4, read_as=1, run_id="r") for i in range(3)]
    assert [d.label for d in mine.drawings()] == [4, 5, 6] and np.array_equal(mine.drawings()[1].image, images[1])
    mine.delete(ids[1])
    assert [d.id for d in HandwritingSet(store).drawings()] == [ids[0], ids[2]]  # kept in the store
    with zipfile.ZipFile(io.BytesIO(mine.export_idx())) as z, z.open("my-handwriting/train/train-images-idx3-ubyte") as f:
        data = f.read()
        labels = z.read("my-handwriting/train/train-labels-idx1-ubyte")
    tmp = store.root / "x"
    tmp.mkdir()
    (tmp / "i").write_bytes(data), (tmp / "l").write_bytes(labels)
    assert np.array_equal(read_images(tmp / "i"), images[[0, 2]]) and read_labels(tmp / "l").tolist() == [4, 6]
    with pytest.raises(ExplainedValueError, match="not a digit"):
        mine.add(images[0], label=12)
    with pytest.raises(ValueError, match="28×28"):
        mine.add(np.zeros((28, 27), np.uint8), label=1)


def test_a_fine_tune_starts_from_the_model_and_reads_the_drawings_better_afterwards(with_run, small_mnist):
    store, run_id = with_run
    base = store.get(run_id)
    mine = HandwritingSet(store)
    test_images, test_labels = load_arrays(validate_mnist_dir(small_mnist), "test")
    probs = model_service.predict(base.checkpoint, test_images)
    wrong = np.flatnonzero(probs.argmax(1) != test_labels)[:12]  # digits this model reads wrongly: "my handwriting"
    assert len(wrong) == 12
    for i in wrong:
        mine.add(test_images[i], int(test_labels[i]), read_as=int(probs[i].argmax()), run_id=run_id)
    made = finetune.plan(store, base, mine.drawings())
    assert made.copies >= 1 and made.config.init_checkpoint == f"run:{base.id}" and made.config.epochs == finetune.EPOCHS
    tuned_folder = validate_mnist_dir(made.config.data_dir)
    # a folder with a test split keeps all its training images
    assert tuned_folder.train_count == 1200 + 12 * made.copies
    tuned_id = store.create_run(made.config, name="fine-tune", source=finetune.SOURCE)
    events = EventLog()
    assert execute(store, tuned_id, [events]) == "completed"
    assert events.of(StepEvent)[0].loss < 1.5, "the first step starts from trained weights, not random ones"
    tuned = store.get(tuned_id)
    assert finetune.find(store, base) == (tuned, made) and finetune.find(store, tuned)[1] == made
    split, images, labels = finetune.evaluation_split(base.config)
    drawings = mine.drawings(list(made.drawing_ids))
    result = finetune.scores(model_service.predict, base.checkpoint, tuned.checkpoint,
                             {"drawings": (np.stack([d.image for d in drawings]), np.array([d.label for d in drawings])),
                              "evaluation": (images, labels)})
    mine_score, evaluation = result
    assert split == "test" and evaluation.n == 500 and mine_score.before == 0.0
    assert mine_score.after >= 0.5, mine_score
    assert evaluation.after > evaluation.before - 0.05, "it must not forget the digits it read before"
    # Draw, still on the base model, offers the fine-tuned one; one click and Draw reads with it
    from tests.support.apptest import page
    at = page("draw")
    at.selectbox(key="draw_run").set_value(store.get(run_id)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="draw_run").value.id == run_id
    at.button(key="try_tuned").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="draw_run").value.id == tuned_id
    assert not [b for b in at.button if b.key == "try_tuned"]  # already the fine-tuned model


def test_a_fine_tune_needs_drawings_and_a_checkpoint_of_the_same_network(with_run):
    store, run_id = with_run
    with pytest.raises(ExplainedValueError, match="no drawings"):
        finetune.plan(store, store.get(run_id), [])


def test_deleting_a_fine_tune_run_deletes_its_data_folder_and_nothing_else(with_run, small_mnist):
    store, run_id = with_run
    mine = HandwritingSet(store)
    mine.add(np.zeros((28, 28), np.uint8), 3)
    made = finetune.plan(store, store.get(run_id), mine.drawings())
    tuned_id = store.create_run(made.config, name="fine-tune", source=finetune.SOURCE, status="completed")
    folder = validate_mnist_dir(made.config.data_dir).root
    assert folder.parent == store.root / "finetune"
    store.delete(tuned_id)
    assert not folder.exists() and validate_mnist_dir(small_mnist).train_count == 1200
    assert store.get(run_id) is not None and len(mine.drawings()) == 1
