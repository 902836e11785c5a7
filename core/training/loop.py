"""Training: a run is epochs, an epoch is steps (as mindcv's train_with_func: run -> train_epoch -> step).

train() knows nothing of Streamlit or the run store: it reports through callbacks (core.training.events)
and asks its StepPlanner before each graph call how many steps to take now (the lesson's pause, slow motion,
Step ×n and live learning rates are its answers; core.training.step_planner). Early stopping is a callback that
sets should_stop. Both training styles share this loop; only the step differs (core.training.steps). Callers
run core.runtime.prepare_process first.
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import mindspore.nn as nn

from core.config import TrainConfig
from core.data.drawn_look import SHARE, drawn_look_ready
from core.data.folders import MnistFolder
from core.messages import Message
from core.model.evaluation import evaluate_batches
from core.model.metrics import confusion_counts
from core.networks import network_spec
from core.training.prepared import model_for
from core.training.build import control_for, prepare_data, seed_run
from core.training.clock import StepClock
from core.training.run_control import Control
from core.training.early_stopping import BestEpoch, EarlyStopping
from core.training.events import Callback, CallbackList, EpochMetrics, LayersEvent, StepEvent, ValidationEvent
from core.training.layer_stats import summarize_all
from core.training.live_values import LiveValues
from core.training.parallel import Parallel
from core.training.resume_state import ResumeState
from core.training.state import EpochTally, LoopState, StepOutcome
from core.training.step_calls import take_group
from core.training.step_planner import StepPlanner
from core.training.weight_arrays import snapshot

__all__ = ["TrainResult", "train"]


@dataclass
class TrainResult:
    status: str                      # completed | early_stopped | stopped | diverged
    net: nn.Cell
    said: Message | None = None      # why it ended early
    history: list[EpochMetrics] = field(default_factory=list)  # one per finished epoch
    best_epoch: int | None = None
    steps: int = 0
    diverged_at_step: int | None = None

    @property
    def message(self) -> str:
        """Why it ended early, in English ("" for a run that simply completed)."""
        return str(self.said or "")


def train(config: TrainConfig, folder: MnistFolder, callbacks: Iterable[Callback] = (),
          control: Control | None = None, resume: ResumeState | None = None,
          parallel: Parallel | None = None) -> TrainResult:
    """Train per config on folder's train split (minus a stratified validation part).

    Callbacks observe every event; their on_epoch_end(net, metrics) runs after every epoch whose weights are
    sound (e.g. to checkpoint). With resume, training continues after resume.epoch from its weights.
    Momentum/Adam moments restart from zero, and the shuffle order of the remaining epochs differs from an
    uninterrupted run's. With parallel (one of config.workers data-parallel processes), this process trains
    on its 1/workers share of the training images with config.worker_batch samples per step; metrics are
    global.
    """
    stopping = EarlyStopping.for_run(config, resume)  # first: its best weights are back before the others end
    loop = _start(config, folder, CallbackList([stopping, *callbacks]), control_for(control, parallel), resume,
                  parallel)
    done_epochs = resume.epoch if resume else 0
    best = BestEpoch.for_run(resume)
    result = TrainResult("completed", loop.model.net, history=list(resume.history) if resume else [])
    # One iterator for all remaining epochs: a fresh order each epoch.
    iterator = loop.data.train.create_tuple_iterator(num_epochs=max(config.epochs - done_epochs, 1))
    for epoch in range(done_epochs + 1, config.epochs + 1):
        tally = _train_epoch(loop, epoch, iterator)
        result.steps = loop.step
        if tally.ended or tally.seen == 0:
            result.status = tally.ended or result.status
            result.said, result.diverged_at_step = tally.said, tally.diverged_at_step
            break
        result.history.append(_close_epoch(loop, epoch, tally, best))
        if (asker := loop.events.stop_asked()) is not None:
            result.status, result.said = "early_stopped", asker.stop_message()
            loop.events.log(result.message)
            break
    result.best_epoch = best.best_epoch
    loop.events.train_end(loop.model.net, result.status)
    loop.model.net.set_train(False)
    return result


def _start(config: TrainConfig, folder: MnistFolder, events: CallbackList, control: Control,
           resume: ResumeState | None, parallel: Parallel | None) -> LoopState:
    """The run's data and model, its state before the first step, and its first reports."""
    config.validate()
    done_epochs = resume.epoch if resume else 0
    seed_run(config, done_epochs)
    if config.drawn_look and not drawn_look_ready(folder):  # ~11 ms an image, once per data folder
        events.log(f"drawn look: redrawing {SHARE * 100:.0f} % of the {folder.train_count:,} training images, once "
                   "(kept for the next runs)")
    data = prepare_data(config, folder, parallel, seed=config.seed + done_epochs)
    model = model_for(config, resume, parallel, data.steps_per_epoch)  # a warm worker's, when it fits
    step = resume.step if resume else 0
    clock = StepClock(data.steps_per_epoch * config.epochs, resume.elapsed if resume else 0.0)
    compiled: set[str] = set()
    planner = StepPlanner(control, LiveValues(model.optimizer, config.setting_changes, first_step=step + 1), events,
                          clock, k=getattr(model.step, "k", 1),  # a test may substitute a bare step
                          validate_every=config.validate_every, validates=data.validation is not None,
                          compiled=compiled)
    loop = LoopState(config, data, model, events, clock, planner, parallel, step=step, first_step=step + 1,
                     compiled=compiled)
    _announce(loop, resume)
    return loop


def _announce(loop: LoopState, resume: ResumeState | None) -> None:
    """The run's first log lines, and the initial weights' statistics of a fresh run."""
    c, d = loop.config, loop.data
    loop.events.log(f"{c.network} · {c.style} style · {c.mode} mode · {d.train_images} train / "
                    f"{d.validation_images} validation images · {d.steps_per_epoch} steps per epoch"
                    + (f" · {d.workers} workers × {d.batch} samples per step (global batch {d.batch * d.workers})"
                       if loop.parallel else ""))
    if (operators_line := network_spec(c.network).operators_line) is not None:
        loop.events.log(operators_line(loop.model.net))
    if resume is not None:
        loop.events.log(f"resuming after epoch {resume.epoch} (step {resume.step}) from its checkpoint")
    else:
        loop.events.emit(LayersEvent(0, summarize_all(0, snapshot(loop.model.net), None)))


def _train_epoch(loop: LoopState, epoch: int, iterator) -> EpochTally:
    """The epoch's steps, K per graph call where nothing needs them one at a time, until the shared iterator
    ends the pass, a stop is requested or the loss diverges."""
    loop.model.net.set_train()
    tally = EpochTally(started=time.monotonic())
    last_step = loop.step + loop.data.steps_per_epoch
    batches = iter(iterator)  # the shared iterator ends each pass at the epoch boundary
    while True:
        turn = loop.planner.next_turn(loop.step, last_step)
        tally.paused += turn.paused
        if turn.stop:
            tally.ended, tally.said = "stopped", Message("stopped_at", {"step": loop.step})
            break
        group = list(itertools.islice(batches, max(turn.steps, 1)))  # 0 steps: only the pass's end is left to read
        for outcome in take_group(loop, group, last_step):
            if not _count(loop, epoch, tally, outcome):
                break
        if tally.ended or len(group) < max(turn.steps, 1):
            break
        if loop.planner.validation_due(loop.step, last_step):
            _validate_now(loop, epoch)
    return tally


def _count(loop: LoopState, epoch: int, tally: EpochTally, o: StepOutcome) -> bool:
    """Add a step to the epoch's tally and report it; False when its loss diverged (the run ends there)."""
    if o.grads is not None:
        tally.grads = o.grads
    if not math.isfinite(o.loss):
        loop.step = o.step  # the rest of a K-step call trained a network already diverged: not counted
        tally.ended, tally.diverged_at_step = "diverged", o.step
        tally.said = Message("diverged_at", {"loss": str(o.loss), "step": o.step, "epoch": epoch})
        loop.events.log(str(tally.said))
        return False
    tally.correct += o.correct  # this worker's; summed over workers when the epoch closes
    tally.loss_sum += o.loss * o.samples
    tally.seen += o.samples
    loop.events.emit(StepEvent(step=o.step, epoch=epoch, loss=o.loss, step_seconds=o.seconds,
                               samples_per_s=loop.clock.samples_per_s(o.seconds, o.samples),
                               elapsed=loop.clock.elapsed(), eta=loop.clock.eta(o.step, loop.planner.delay()),
                               total_steps=loop.clock.total_steps))
    return True


def _validate_now(loop: LoopState, epoch: int) -> None:
    val_loss, val_acc, _, _ = evaluate_batches(loop.model.eval_net, loop.data.validation)
    loop.model.net.set_train()
    loop.events.emit(ValidationEvent(loop.step, epoch, val_loss, val_acc))


def _close_epoch(loop: LoopState, epoch: int, tally: EpochTally, best: BestEpoch) -> EpochMetrics:
    """Validate, decide whether the epoch is the best so far, and report it (metrics, layer statistics,
    then on_epoch_end with the network)."""
    correct = tally.correct
    if loop.parallel is not None:
        correct = int(round(loop.parallel.sum([correct])[0]))
    seconds, elapsed = time.monotonic() - tally.started - tally.paused, loop.clock.elapsed()  # pauses excluded
    val_loss = val_acc = confusion = None
    if loop.data.validation is not None:
        val_loss, val_acc, logits, labels = evaluate_batches(loop.model.eval_net, loop.data.validation)
        confusion = tuple(tuple(int(n) for n in row) for row in confusion_counts(labels, logits.argmax(1)))
    metrics = EpochMetrics(epoch=epoch, train_loss=tally.loss_sum / tally.seen, train_acc=correct / tally.seen,
                           val_loss=val_loss, val_acc=val_acc, epoch_seconds=seconds,
                           samples_per_s=tally.seen / max(seconds, 1e-9), elapsed=elapsed, step=loop.step,
                           eta=loop.clock.eta(loop.step), best=best.update(epoch, val_loss), val_confusion=confusion)
    loop.events.emit(metrics)
    # the validation curve's point at the epoch's end
    if loop.config.validate_every and val_loss is not None and val_acc is not None:
        loop.events.emit(ValidationEvent(loop.step, epoch, val_loss, val_acc))
    loop.events.emit(LayersEvent(epoch, summarize_all(epoch, snapshot(loop.model.net), tally.grads)))
    loop.events.epoch_end(loop.model.net, metrics)
    return metrics
