"""Track any MindSpore training in the studio: a script of its own records its run into the run store, and the
run shows live on Train, Compare and Runs like the studio's own, marked as external.

Two added lines, as MindInsight's SummaryCollector or W&B's wandb.init:

    from core.track import StudioCallback
    model.train(epochs, dataset, callbacks=[StudioCallback(name="lenet-tutorial", config={"lr": 0.01})])

or, around a loop of one's own (a functional value_and_grad loop):

    from core.track import track_run
    with track_run(name="mlp", config={"learning_rate": 0.01, "epochs": 3}) as run:
        for epoch in ...:
            for data, label in ...:
                loss = train_step(data, label)
                run.log_step(loss=loss)
                if run.should_stop():          # the studio's Stop (and Pause: it waits here) reach the script
                    break
            run.log_epoch(val_loss=..., val_acc=...)
        run.save_checkpoint(net)

The store is the studio's default ($STUDIO_DATABASE_URL, else the SQLite file under $STUDIO_DATA_DIR or ./runs),
or `store=` a folder or a database URL. The studio cannot pause or stop a process it did not start: Pause and
Stop reach a script only where it asks run.should_stop() (StudioCallback asks after every step).
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mindspore as ms
from mindspore.train import Callback as MindSporeCallback

from core.foreign_settings import studio_config
from core.messages import Explained, ExplainedValueError, Message
from core.model.checkpoint import CheckpointError, infer_network
from core.runs.worker.checkpoints import CheckpointWriter
from core.runs.worker.heartbeat import Heartbeat
from core.runs.worker.recording import StoreControl, StoreRecorder
from core.runs.rows import EXTERNAL
from core.runs.store import RunStore
from core.runs.store.arguments import store_from as open_store  # a store named by a folder, a URL or None
from core.runs.store.run_store import HOST
from core.runs.people.permissions import script_user
from core.training.clock import StepClock
from core.training.early_stopping import BestEpoch
from core.training.events import EpochMetrics, PhaseEvent, Phase, StepEvent, ValidationEvent
from core.training.run_control import wait_while_paused

__all__ = ["TrackedRun", "track_run", "StudioCallback", "open_store"]

MAX_SETTINGS_KEYS = 500         # a script's settings: at most this many keys
MAX_SETTINGS_BYTES = 64 * 1024  # and this many bytes of JSON


def _jsonable(config: Mapping[str, Any]) -> str:
    """The script's settings as the store keeps them (JSON; what JSON cannot say, as text). Bounded: every page
    that lists runs reads them, so a script's 20 MB would slow everyone's."""
    if len(config) > MAX_SETTINGS_KEYS:
        raise ExplainedValueError("script_settings_too_many", n=len(config), most=MAX_SETTINGS_KEYS)
    text = json.dumps(dict(config), default=str)
    if len(text.encode("utf-8")) > MAX_SETTINGS_BYTES:
        raise ExplainedValueError("script_settings_too_big", kb=len(text.encode("utf-8")) // 1024,
                                  most=MAX_SETTINGS_BYTES // 1024)
    return text


class TrackedRun:
    """One external run in the store; made by track_run or StudioCallback."""

    def __init__(self, store: RunStore, run_id: str, total_steps: int | None = None):
        self.store, self.id = store, run_id
        self.recorder = StoreRecorder(store, run_id)
        self.control = StoreControl(store, run_id, self.recorder)
        self.clock = StepClock(total_steps or 0)
        self.best = BestEpoch()
        self.step = self.epoch = 0
        self.epoch_losses: list[float] = []
        self.epoch_samples = 0
        self.last_step_at = self.epoch_started = time.monotonic()
        self.stopped = False
        self.recorder.on_phase(PhaseEvent(Phase.TRAINING))

    def log_step(self, loss: Any, step: int | None = None, epoch: int | None = None, samples: int | None = None,
                 total_steps: int | None = None) -> None:
        """A training step's loss (a float or a MindSpore/NumPy scalar). step and epoch (1-based, the epoch the
        step belongs to) count on by themselves; samples: the batch size, for samples/s and the ETA."""
        now = time.monotonic()
        seconds, self.last_step_at = now - self.last_step_at, now
        first = self.step == 0
        self.step = step if step is not None else self.step + 1
        if epoch is not None:
            self.epoch = epoch - 1  # self.epoch counts the finished epochs
        if total_steps:
            self.clock.total_steps = total_steps
        value = _float(loss)
        self.epoch_losses.append(value)
        self.epoch_samples += samples or 0
        if samples and not first:  # the first step's time holds the script's set-up and the graph's compilation
            self.clock.record(seconds, samples)
        known = bool(self.clock.total_steps)  # a loop of one's own may not say how many steps it takes
        event = StepEvent(step=self.step, epoch=self.epoch + 1, loss=value, step_seconds=seconds,
                          samples_per_s=self.clock.samples_per_s(seconds, samples or 0), elapsed=self.clock.elapsed(),
                          eta=self.clock.eta(self.step) if known else None,
                          total_steps=self.clock.total_steps)
        self.control.on_step(event)
        self.recorder.on_step(event)
        if not samples:
            self.recorder.progress["samples_per_s"] = None
        if not math.isfinite(value):
            self.log(f"loss {value} at step {self.step}")

    def log_validation(self, val_loss: Any, val_acc: Any) -> None:
        """A validation inside an epoch (at the current step)."""
        self.recorder.on_validation(ValidationEvent(self.step, self.epoch + 1, _float(val_loss), _float(val_acc)))

    def log_epoch(self, train_loss: Any = None, train_acc: Any = None, val_loss: Any = None,
                  val_acc: Any = None, epoch: int | None = None) -> EpochMetrics:
        """An epoch ended: its train loss (default: the mean of its steps' losses), accuracy and validation."""
        self.epoch = epoch if epoch is not None else self.epoch + 1
        losses, self.epoch_losses = self.epoch_losses, []
        seconds, samples = time.monotonic() - self.epoch_started, self.epoch_samples
        self.epoch_started, self.epoch_samples = time.monotonic(), 0
        loss = _float(train_loss) if train_loss is not None else (sum(losses) / len(losses) if losses else math.nan)
        vl = None if val_loss is None else _float(val_loss)
        metrics = EpochMetrics(epoch=self.epoch, train_loss=loss,
                               train_acc=None if train_acc is None else _float(train_acc),
                               val_loss=vl, val_acc=None if val_acc is None else _float(val_acc),
                               epoch_seconds=seconds, samples_per_s=samples / seconds if samples else None,
                               elapsed=self.clock.elapsed(),
                               step=self.step, best=self.best.update(self.epoch, vl))
        self.recorder.on_epoch(metrics)
        if metrics.val_loss is not None and metrics.val_acc is not None:
            self.recorder.on_validation(ValidationEvent(self.step, self.epoch, metrics.val_loss, metrics.val_acc))
        self.store.update(self.id, epoch=self.epoch)
        return metrics

    def log(self, message: str) -> None:
        """A line for the run's log."""
        self.store.log(self.id, str(message))

    def should_stop(self) -> bool:
        """Whether the studio asked this run to stop (once it has, always); while it is paused in the studio, waits
        here."""
        if self.stopped:
            return True
        stop, _ = wait_while_paused(self.control)  # the control reads the store at most every 0.2 s
        if stop and not self.stopped:  # said once, on the script's own output, where its user looks
            print(f"[studio] run {self.id}: stop asked from the studio at step {self.step}; the script ends its "
                  "training here", file=sys.stderr, flush=True)
        self.stopped = self.stopped or stop
        return stop

    def save_checkpoint(self, net) -> Path:
        """The network's weights in the store (model.ckpt, on every host of a team's database). A LeNet-5 or MLP of
        the studio's shape is then evaluated, drawn for and exported like the studio's own runs."""
        try:
            config = infer_network({p.name: p for p in net.get_parameters()})
        except CheckpointError:
            path = self.store.checkpoint_path(self.id)
            path.parent.mkdir(parents=True, exist_ok=True)
            ms.save_checkpoint(net, str(path))
            self.store.keep_file(self.id, path.name)
            self.log(f"checkpoint saved at step {self.step} (a network of its own: the studio keeps it but cannot "
                     "evaluate or draw with it)")
            return path
        CheckpointWriter(self.store, self.id, config).save(net, self.epoch, self.step)
        self.log(f"checkpoint saved at step {self.step}")
        return self.store.checkpoint_path(self.id)

    def finish(self, status: str, said: Message) -> None:
        self.recorder.flush()
        self.store.log(self.id, f"{status}: {said}")
        self.store.finish(self.id, status, said)


def _float(value: Any) -> float:
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    return float(getattr(value, "item", lambda: value)())


def start_run(name: str | None, config: Mapping[str, Any] | None, store: RunStore | str | os.PathLike | None,
              total_steps: int | None = None) -> TrackedRun:
    """Record a new external run, running in this process."""
    opened = open_store(store)
    opened.ride_out_outages()  # a database restart pauses the script's reports instead of ending it
    settings = dict(config or {})
    now = time.time()
    run_id = opened.create_run(studio_config(settings), name=name, source=EXTERNAL, status="running",
                               exclusive=False, submitter=script_user(), params=_jsonable(settings),
                               started=now, heartbeat=now, pid=os.getpid(), host=HOST,
                               total_steps=total_steps or 0)
    opened.log(run_id, f"tracking a script of its own (pid {os.getpid()}): Pause and Stop reach it where it asks "
                       "run.should_stop()")
    return TrackedRun(opened, run_id, total_steps)


@contextmanager
def track_run(name: str | None = None, config: Mapping[str, Any] | None = None,
              store: RunStore | str | os.PathLike | None = None, total_steps: int | None = None
              ) -> Iterator[TrackedRun]:
    """A run recorded while the block runs: completed when it ends, stopped when the studio's Stop was seen,
    failed (with the error) when it raises, stopped on Ctrl-C. The heartbeat tells the studio it is alive."""
    tracked = start_run(name, config, store, total_steps)
    with Heartbeat(tracked.store, tracked.id):
        try:
            yield tracked
        except KeyboardInterrupt:
            tracked.finish("stopped", Message("interrupted_by_signal"))
            raise
        except BaseException as e:
            tracked.finish("failed", e.said if isinstance(e, Explained) else Message("script_failed",
                                                                                     {"error": _said(e)}))
            raise
    if tracked.stopped:
        tracked.finish("stopped", Message("stopped_at", {"step": tracked.step}))
    else:
        tracked.finish("completed", Message("finished_epochs", {"n": tracked.epoch}))


def _said(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".strip().rstrip(":")


class StudioCallback(MindSporeCallback):
    """A mindspore.train.Callback for Model.train / Model.fit that records the run into the studio: every step's
    loss, every epoch (train loss, and Model.fit's validation: its "accuracy"/"acc" and "loss"/"eval_loss"), and
    the end. The studio's Stop ends training after the current step (run_context.request_stop()), Pause waits.
    Give it dataset_sink_mode=False to see every step (with sinking, MindSpore calls it once per sink)."""

    def __init__(self, name: str | None = None, config: Mapping[str, Any] | None = None,
                 store: RunStore | str | os.PathLike | None = None, checkpoint: bool = True):
        super().__init__()
        self.name, self.config, self.store, self.checkpoint = name, dict(config or {}), store, checkpoint
        self.tracked: TrackedRun | None = None
        self.heartbeat: Heartbeat | None = None

    def on_train_begin(self, run_context) -> None:
        params = run_context.original_args()
        epochs, per_epoch = int(params.epoch_num), int(params.batch_num)
        config = {"epochs": epochs, **self.config}
        self.tracked = start_run(self.name, config, self.store, total_steps=epochs * per_epoch)
        self.heartbeat = Heartbeat(self.tracked.store, self.tracked.id).__enter__()
        self.net = params.network
        try:  # for samples/s and the ETA
            self.batch: int | None = int(params.train_dataset.get_batch_size())
        except (AttributeError, RuntimeError, TypeError):  # not a batched MindSpore dataset: neither is shown
            self.batch = None

    def on_train_step_end(self, run_context) -> None:
        params = run_context.original_args()
        outputs = params.net_outputs
        loss = outputs[0] if isinstance(outputs, (tuple, list)) else outputs
        assert self.tracked is not None
        self.tracked.log_step(loss, step=int(params.cur_step_num), samples=self.batch)
        if self.tracked.should_stop():
            run_context.request_stop()

    def on_train_epoch_end(self, run_context) -> None:
        params = run_context.original_args()
        results = dict(params.get("eval_results") or {})  # set by Model.fit with a valid_dataset
        assert self.tracked is not None
        val_acc = next((results[k] for k in ("accuracy", "acc", "Accuracy") if k in results), None)
        val_loss = next((results[k] for k in ("loss", "eval_loss") if k in results), None)
        self.tracked.log_epoch(val_loss=val_loss, val_acc=val_acc, epoch=int(params.cur_epoch_num))

    def on_train_end(self, run_context) -> None:
        self._end(None)

    def __exit__(self, *err) -> None:
        self._end(err[1] if err and err[0] is not None else None)

    def _end(self, error: BaseException | None) -> None:
        """Finish the run once: completed (or stopped), or failed with the error that ended Model.train."""
        tracked, self.tracked = self.tracked, None
        if tracked is None:
            return
        try:
            if error is None and self.checkpoint:
                tracked.save_checkpoint(self.net)
            if isinstance(error, KeyboardInterrupt):
                tracked.finish("stopped", Message("interrupted_by_signal"))
            elif error is not None:
                tracked.finish("failed", Message("script_failed", {"error": _said(error)}))
            elif tracked.stopped:
                tracked.finish("stopped", Message("stopped_at", {"step": tracked.step}))
            else:
                tracked.finish("completed", Message("finished_epochs", {"n": tracked.epoch}))
        finally:
            if self.heartbeat is not None:
                self.heartbeat.__exit__(None, None, None)
