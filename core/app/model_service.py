"""MindSpore in a multi-threaded server process: one process-wide lock around every call, and a cache of
loaded models. MindSpore is not thread-safe (two sessions predicting at once crashed the whole server), and
Streamlit runs each browser session in its own thread.

Pages import this module when they load, so MindSpore (and every core module that imports it) is imported
inside the functions: a page that never predicts never pays for it."""
from __future__ import annotations

import logging
import os
import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from pathlib import Path

import numpy as np

from core.data.folders import validate_mnist_dir
from core.messages import Message
from core.formats import ModelFormat
from core.model.export import export as _export
from core.model.export_check import agreement, predict_exported
from core.model.shift_reading import averaged_probabilities
from core.runs.store import RunStore
from core.runtime import set_mode

MINDSPORE_LOCK = threading.RLock()
_models: OrderedDict[tuple, object] = OrderedDict()
_MAX_MODELS = 8
_mode_set = False


def _ensure_mode() -> None:
    global _mode_set
    if not _mode_set:
        # Graph mode: a prediction is over twice as fast as in PyNative (bench/predict_latency.py); Graph's
        # compilation happens in the warm-up when a model is loaded, not at the first click.
        set_mode("graph")
        _mode_set = True


_preloading: threading.Thread | None = None
_preload_cpu_s = 0.0  # the preload thread's CPU time, recorded when it ends
PRELOAD_ENV = "STUDIO_PRELOAD"


def preload_wanted() -> bool:
    """Whether the app preloads MindSpore after a server's first page (STUDIO_PRELOAD=0: not; the first page that
    needs it then loads it, as on a host short of memory, or a test server that never predicts)."""
    return os.environ.get(PRELOAD_ENV, "1").strip() != "0"


def preload(store: RunStore) -> threading.Thread:
    """Once per process, in a background thread: import MindSpore and the model code (1.1-1.2 s here, ~350 MB),
    select Graph mode, and load the model Evaluate and Draw show first (the newest finished run with a
    checkpoint) with its prediction and inspection graphs compiled. The first visit of Evaluate took 1.6-2.4 s,
    almost all of it this import and the inspection's compilation (bench/page_times.py, py-spy). The app starts it
    after the first page's run: started with the server, it slowed the first page from ~1.6 s to 2.9-3.7 s."""
    global _preloading
    with MINDSPORE_LOCK:
        if _preloading is None:
            newest = next((store.checkpoint_file(r) for r in store.list_runs() if r.checkpoint and not r.active), None)
            _preloading = threading.Thread(target=_warm_up, args=(newest,), name="preload-mindspore", daemon=True)
            _preloading.start()
    return _preloading


def preload_cpu_seconds() -> float:
    """CPU seconds the preload thread has spent (so far, while it runs). The live views' pacing (ui/poll_interval.py)
    leaves it out of the server's own work: counted in, its 2-3 CPU-s slowed every live view for ~10 s after
    the first page (the first live step of a run started then showed 1.3-2.0 s late)."""
    thread = _preloading
    if thread is not None and thread.is_alive() and thread.ident is not None:
        try:
            return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except OSError:  # it has just ended: its time is recorded
            pass
    return _preload_cpu_s


def _warm_up(checkpoint: str | None) -> None:
    global _preload_cpu_s
    try:
        _warm_up_steps(checkpoint)
    finally:
        _preload_cpu_s = time.thread_time()


def _warm_up_steps(checkpoint: str | None) -> None:
    """Step by step, each holding the lock only for itself, so that a page that needs MindSpore meanwhile waits
    for one step, not for all (the Data page's pipeline view waited 2.5 s for the whole warm-up)."""
    from core.model.checkpoint import CheckpointError  # deferred: MindSpore (the import lock serialises it)
    with MINDSPORE_LOCK:
        _ensure_mode()
    if checkpoint:
        try:
            inspect(checkpoint, np.zeros((28, 28), np.uint8))  # loads the model (one step), then inspects
        except (CheckpointError, OSError) as e:  # the page that opens it will say what is wrong
            logging.getLogger(__name__).warning("preloading %s: %s", checkpoint, e)


def load_model(path: str | os.PathLike):
    """A checkpoint.LoadedModel, cached by path and modification time (CheckpointError if unusable)."""
    from core.model import checkpoint  # deferred: MindSpore
    path = Path(path)
    try:
        key: tuple[str, int | None] = (str(path), path.stat().st_mtime_ns)
    except OSError:
        key = (str(path), None)
    with MINDSPORE_LOCK:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
        _ensure_mode()
        model = checkpoint.load(path)
        # Warm up now (the first call builds the kernels: ~100x a later one) rather than on a user's click.
        from core.model.evaluation import predict as _predict  # deferred: MindSpore
        _predict(model.net, np.zeros((1, 28, 28), np.uint8))
        _models[key] = model
        while len(_models) > _MAX_MODELS:
            _models.popitem(last=False)
        return model


def predict(path: str | os.PathLike, images: np.ndarray) -> np.ndarray:
    """Class probabilities for uint8 images (N, 28, 28) from the checkpoint at path."""
    from core.model.evaluation import predict as _predict  # deferred: MindSpore
    model = load_model(path)
    with MINDSPORE_LOCK:
        return _predict(model.net, images)


def read_drawing(path: str | os.PathLike, views: np.ndarray, shifts: bool = False) -> np.ndarray:
    """Class probabilities (10,) of a drawing from its views (core.data.drawing.readings), averaged; shifts: each
    view also read with its four 1-pixel shifts (core.model.shift_reading)."""
    per_view = averaged_probabilities(lambda images: predict(path, images), views) if shifts else predict(path, views)
    return per_view.mean(axis=0)


def inspect(path: str | os.PathLike, image: np.ndarray):
    """core.model.inspection.Inspection of one uint8 (28, 28) image by the checkpoint at path."""
    from core.model.inspection import inspect as _inspect  # deferred: MindSpore
    model = load_model(path)
    with MINDSPORE_LOCK:
        return _inspect(model.net, image)


def evaluate(path: str | os.PathLike, data_dir: str | None, split: str, shifts: bool = False):
    """metrics.Report of a checkpoint on a split of a MNIST folder (shifts: each image read with its four 1-pixel
    shifts, core.model.shift_reading)."""
    from core.model.evaluation import evaluate as _evaluate  # deferred: MindSpore
    model = load_model(path)
    folder = validate_mnist_dir(data_dir)
    with MINDSPORE_LOCK:
        return _evaluate(model.net, model.config.loss, folder, split, model.config.val_fraction, shifts=shifts)


def pipeline_steps(image: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """One raw 28x28 uint8 image through MindSpore's own transforms, step by step."""
    from core.data.pipeline import image_transforms  # deferred: MindSpore
    with MINDSPORE_LOCK:
        steps, x = [("raw (MnistDataset)", image[:, :, None])], image[:, :, None]
        for op in image_transforms():
            x = op(x)
            steps.append((type(op).__name__, np.asarray(x)))
    return steps


def augmented_copies(image: np.ndarray, n: int, seed: int = 0) -> list[np.ndarray]:
    """n randomly augmented copies of one raw 28x28 uint8 image, by the training pipeline's own ops."""
    import mindspore.dataset as ds  # deferred: MindSpore

    from core.data.pipeline import augment_transforms
    with MINDSPORE_LOCK:
        before = ds.config.get_seed()
        ds.config.set_seed(seed)
        try:
            ops = augment_transforms()
            return [np.asarray(ops[0](image[:, :, None]))[:, :, 0] for _ in range(n)]
        finally:
            ds.config.set_seed(before)


def export(path: str | os.PathLike, fmt: ModelFormat, out_dir: str | os.PathLike) -> Path:
    """core.model.export.export under the lock, in the app's Graph mode."""
    with MINDSPORE_LOCK:
        _ensure_mode()
        return _export(path, fmt, out_dir)


def _upload_name(filename: str) -> str:
    """An upload's run name from the browser's file name: its stem without control characters (a name is a
    person's text: any file name must still give one)."""
    stem = "".join(c for c in Path(filename.replace("\\", "/")).stem if not unicodedata.category(c).startswith("C"))
    return f"upload: {stem.strip() or 'checkpoint'}"[:80].strip()


def import_checkpoint(store: RunStore, data: bytes, filename: str, owner: str = "") -> str:
    """Validate an uploaded checkpoint and add it to the store as a finished run. Raises CheckpointError
    (and leaves nothing behind) when the file is empty, too big, not a checkpoint or of a foreign network."""
    from core.model import checkpoint  # deferred: MindSpore
    if len(data) > checkpoint.MAX_CHECKPOINT_BYTES:
        raise checkpoint.too_big(filename, len(data))
    tmp = store.root / f".upload-{uuid.uuid4().hex}.ckpt"
    tmp.write_bytes(data)
    try:
        with MINDSPORE_LOCK:
            _ensure_mode()
            model = checkpoint.load(tmp, name=filename)  # messages name the user's file, not ours
            checkpoint.check_finite(model, filename)
        run_id = store.create_run(model.config, name=_upload_name(filename), source="upload",
                                  status="starting", exclusive=False, submitter=owner)
        final = store.checkpoint_path(run_id)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, final)
        store.keep_file(run_id, final.name)
        store.update(run_id, checkpoint=str(final), started=time.time())
        store.finish(run_id, "completed", Message("uploaded_from", {"filename": filename}))
        return run_id
    finally:
        tmp.unlink(missing_ok=True)


def check_export(path: str | os.PathLike, exported: str | os.PathLike, fmt: ModelFormat, images: np.ndarray):
    """core.model.export_check.Agreement of the exported file with the checkpoint at path on images."""
    reference = predict(path, images)
    with MINDSPORE_LOCK:
        _ensure_mode()
        return agreement(fmt, reference, predict_exported(exported, fmt, images))
