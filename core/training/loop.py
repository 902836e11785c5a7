"""Training: a run is epochs, an epoch is steps (as mindcv's train_with_func: run -> train_epoch -> step).

train() knows nothing of Streamlit or the run store: it reports through callbacks (core.training.events)
and asks a Control between steps whether to pause or stop. Both training styles share this loop; only
the step differs (core.training.steps). Callers run core.runtime.prepare_process first.
"""
from __future__ import annotations

import itertools
import math
import time
from typing import Any
from dataclasses import dataclass, field
from collections.abc import Iterable

import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import numpy as np

from core.config import TrainConfig
from core.data.folders import MnistFolder, load_labels, stratified_split
from core.data.memory_batches import MemoryBatches
from core.data.pipeline import create_dataset
from core.model import checkpoint
from core.model.evaluation import NetWithLoss, evaluate_batches
from core.model.losses import build_loss
from core.model.networks import network_for
from core.model.optim import build_optimizer
from core.messages import Message
from core.runtime import set_mode
from core.training.clock import StepClock
from core.training.control import CollectiveControl, Control, NoControl, slow_down, wait_while_paused
from core.training.early_stopping import EarlyStopping
from core.training.events import (Callback, CallbackList, EpochMetrics, LayersEvent, Phase, PhaseEvent, StepEvent,
                                  ValidationEvent)
from core.training.layer_stats import summarize_all
from core.training.learning_rate import LearningRates
from core.training.parallel import Parallel
from core.training.resume import ResumeState
from core.training.steps import MultiStep, Stepper, make_train_step
from core.training.weights import restore, snapshot

__all__ = ["TrainResult", "train", "prepare_data", "build_model"]


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


@dataclass(frozen=True)
class TrainData:
    train: Any                       # the batched MindSpore dataset of this process's training images
    validation: Any | None           # the validation images (None: val_fraction 0)
    steps_per_epoch: int
    train_images: int                # over all workers
    validation_images: int
    workers: int
    batch: int                       # samples per step on this process


@dataclass(frozen=True)
class Model:
    net: nn.Cell
    step: Stepper
    eval_net: NetWithLoss
    optimizer: nn.Optimizer


@dataclass
class EpochTally:
    """What an epoch's steps add up to on this process, and whether the run ended inside the epoch."""
    started: float
    paused: float = 0.0   # seconds the run was paused during the epoch (not training time)
    loss_sum: float = 0.0
    correct: int = 0
    seen: int = 0
    grads: dict[str, np.ndarray] | None = None  # of the epoch's last step
    ended: str | None = None                     # stopped | diverged
    said: Message | None = None
    diverged_at_step: int | None = None


@dataclass
class _Loop:
    """What every step of a run needs."""
    config: TrainConfig
    data: TrainData
    model: Model
    events: CallbackList
    control: Control
    clock: StepClock
    parallel: Parallel | None
    step: int            # steps taken so far
    first_step: int      # the number of this session's first step (it compiles)
    rates: LearningRates
    compiled: set[str] = field(default_factory=set)  # the step graphs called so far (their first call compiles)


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
    config.validate()
    done_epochs = resume.epoch if resume else 0
    _seed(config, done_epochs)
    data = prepare_data(config, folder, parallel, seed=config.seed + done_epochs)
    model = build_model(config, resume, parallel, data.steps_per_epoch)
    step = resume.step if resume else 0
    loop = _Loop(config, data, model, CallbackList(callbacks), _control(control, parallel),
                 StepClock(data.steps_per_epoch * config.epochs, resume.elapsed if resume else 0.0), parallel,
                 step=step, first_step=step + 1,
                 rates=LearningRates(model.optimizer, config.lr_changes, first_step=step + 1))
    _announce(loop, resume)
    stopping = EarlyStopping.for_run(config, resume)
    result = TrainResult("completed", model.net, history=list(resume.history) if resume else [])
    # One iterator for all remaining epochs: a fresh order each epoch.
    iterator = data.train.create_tuple_iterator(num_epochs=max(config.epochs - done_epochs, 1))
    for epoch in range(done_epochs + 1, config.epochs + 1):
        tally = _train_epoch(loop, epoch, iterator)
        result.steps = loop.step
        if tally.ended or tally.seen == 0:
            result.status = tally.ended or result.status
            result.said, result.diverged_at_step = tally.said, tally.diverged_at_step
            break
        result.history.append(_close_epoch(loop, epoch, tally, stopping))
        if stopping.should_stop:
            result.status, result.said = "early_stopped", stopping.message()
            loop.events.log(result.message)
            break
    result.best_epoch = stopping.best_epoch
    if result.status != "diverged":
        stopping.restore_best(model.net)
    model.net.set_train(False)
    return result


def _seed(config: TrainConfig, done_epochs: int) -> None:
    set_mode(config.mode)
    ms.set_seed(config.seed)
    ds.config.set_seed(config.seed + done_epochs)  # a resumed run does not replay epoch 1's order


def _control(control: Control | None, parallel: Parallel | None) -> Control:
    control = control or NoControl()
    return CollectiveControl(parallel, control) if parallel is not None else control


def prepare_data(config: TrainConfig, folder: MnistFolder, parallel: Parallel | None, seed: int) -> TrainData:
    """The training and validation datasets of this process (its share of them when data-parallel); seed: the
    training order's (the run's seed plus the epochs done, like the pipeline's)."""
    train_idx, val_idx = stratified_split(load_labels(folder, "train"), config.val_fraction)
    workers, batch = (parallel.size, config.worker_batch) if parallel else (1, config.batch_size)
    if parallel is not None:  # an equal, class-balanced share per worker: every worker takes as many steps
        share = len(train_idx) // workers
        train_idx = np.asarray(train_idx)[parallel.rank::workers][:share]
    if batch > len(train_idx):
        raise ValueError(f"batch size {config.batch_size} is larger than the {len(train_idx) * workers} training "
                         "images: lower the batch size")
    if config.augment:  # a random affine per image: MindSpore's pipeline
        train_ds = create_dataset(folder, "train", train_idx, batch, shuffle=True,
                                  num_parallel_workers=config.num_parallel_workers, augment=True)
    else:  # decoded once, batched from memory: the pipeline's threads no longer take CPU from the step
        train_ds = MemoryBatches(folder, "train", train_idx, batch, seed=seed)
    val_ds = (create_dataset(folder, "train", val_idx, max(config.batch_size, 256), shuffle=False,
                             num_parallel_workers=config.num_parallel_workers) if len(val_idx) else None)
    return TrainData(train_ds, val_ds, train_ds.get_dataset_size(), len(train_idx) * workers, len(val_idx),
                     workers, batch)


def build_model(config: TrainConfig, resume: ResumeState | None, parallel: Parallel | None,
                steps_per_epoch: int = 1) -> Model:
    """The network (with a resumed run's weights), its train step in the configured style, and its evaluator."""
    net = network_for(config)
    if config.amp_level != "O0":
        net = ms.amp.auto_mixed_precision(net, config.amp_level)  # casts in place; names stay the same
    if resume is not None:
        restore(net, resume.weights)
    elif config.init_checkpoint:
        restore(net, initial_weights(config))
    loss_fn = build_loss(config.loss)
    optimizer = build_optimizer(config, net.trainable_params(), steps_per_epoch)
    return Model(net, make_train_step(config, net, loss_fn, optimizer, parallel), NetWithLoss(net, loss_fn), optimizer)


def initial_weights(config: TrainConfig) -> dict[str, np.ndarray]:
    """The weights of config.init_checkpoint (CheckpointError when it cannot be loaded, ValueError when it holds
    another network)."""
    if config.init_checkpoint is None:
        raise ValueError("initial_weights needs a config with an init_checkpoint")
    loaded = checkpoint.load(config.init_checkpoint)
    if (loaded.config.network, loaded.config.hidden) != (config.network, config.hidden):
        raise ValueError(f"{config.init_checkpoint} holds a {loaded.config.shape_label}, not the "
                         f"{config.shape_label} this run trains: start from a checkpoint of the same network")
    return snapshot(loaded.net)


def _announce(loop: _Loop, resume: ResumeState | None) -> None:
    """The run's first log lines, and the initial weights' statistics of a fresh run."""
    c, d = loop.config, loop.data
    loop.events.log(f"{c.network} · {c.style} style · {c.mode} mode · {d.train_images} train / "
                    f"{d.validation_images} validation images · {d.steps_per_epoch} steps per epoch"
                    + (f" · {d.workers} workers × {d.batch} samples per step (global batch {d.batch * d.workers})"
                       if loop.parallel else ""))
    if resume is not None:
        loop.events.log(f"resuming after epoch {resume.epoch} (step {resume.step}) from its checkpoint")
    else:
        loop.events.emit(LayersEvent(0, summarize_all(0, snapshot(loop.model.net), None)))


def _train_epoch(loop: _Loop, epoch: int, iterator) -> EpochTally:
    """The epoch's steps, K per graph call where nothing needs them one at a time, until the shared iterator
    ends the pass, a stop is requested or the loss diverges."""
    loop.model.net.set_train()
    tally = EpochTally(started=time.monotonic())
    last_step = loop.step + loop.data.steps_per_epoch
    batches = iter(iterator)  # the shared iterator ends each pass at the epoch boundary
    while True:
        if loop.step < last_step and _wait_for_turn(loop, tally):  # (before sizing: a Step asks for singles)
            tally.ended, tally.said = "stopped", Message("stopped_at", {"step": loop.step})
            break
        size = _group_size(loop, last_step)
        group = list(itertools.islice(batches, max(size, 1)))  # size 0: only the pass's end is left to read
        for outcome in _take_group(loop, group, last_step):
            if not _count(loop, epoch, tally, outcome):
                break
        if tally.ended or len(group) < max(size, 1):
            break
        if _validation_due(loop, last_step):
            _validate_now(loop, epoch)
    return tally


def _group_size(loop: _Loop, last_step: int) -> int:
    """How many steps the next call takes: the step's K where nothing needs single steps, else 1; 0 when the
    epoch's steps are all taken. Single steps: a Step ×n or slow motion under way, the epoch's last step
    (it returns the gradients), and any group that a replayed learning-rate change or a validation would
    fall inside of; and the run's first step (see below)."""
    left = last_step - loop.step
    k = getattr(loop.model.step, "k", 1)  # a test may substitute a bare step
    if left <= 0:
        return 0
    if k <= 1 or left - 1 < k or loop.control.fine_grained() or "single" not in loop.compiled:
        return 1  # the first step alone: its graph compiles ~3x faster than K steps (the epoch's end needs it
        # anyway), so the first live step shows sooner
    first, end = loop.step + 1, loop.step + k
    change = loop.rates.next_change(first + 1)
    every = loop.config.validate_every
    if (change is not None and change <= end) or (every and loop.data.validation is not None
                                                   and (first - 1) // every != (end - 1) // every):
        return 1
    return k


@dataclass(frozen=True)
class StepOutcome:
    step: int
    loss: float
    correct: int          # this worker's correct predictions
    samples: int          # the step's samples over all workers
    seconds: float
    grads: dict | None = None


def _count(loop: _Loop, epoch: int, tally: EpochTally, o: StepOutcome) -> bool:
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
                               elapsed=loop.clock.elapsed(), eta=loop.clock.eta(o.step, o.seconds),
                               total_steps=loop.clock.total_steps))
    return True


def _wait_for_turn(loop: _Loop, tally: EpochTally) -> bool:
    """Before a step: wait while paused, then slow motion's delay (neither counts as training time), then take
    a new learning rate. Whether the run is asked to stop."""
    stop, paused = wait_while_paused(loop.control)
    if not stop:
        paused += slow_down(loop.control)
        stop, more = wait_while_paused(loop.control)  # a pause asked for during the delay
        paused += more
    if paused:
        tally.paused += paused
        loop.clock.paused(paused)
    if not stop:
        change = loop.rates.before_step(loop.step + 1, loop.control)
        if change is not None:
            loop.events.emit(change)
    return stop


def _validation_due(loop: _Loop, last_step: int) -> bool:
    """Validation between epochs, every config.validate_every steps (the epoch's last step validates anyway)."""
    every = loop.config.validate_every
    return bool(every) and loop.data.validation is not None and loop.step % every == 0 and loop.step != last_step


def _validate_now(loop: _Loop, epoch: int) -> None:
    val_loss, val_acc, _, _ = evaluate_batches(loop.model.eval_net, loop.data.validation)
    loop.model.net.set_train()
    loop.events.emit(ValidationEvent(loop.step, epoch, val_loss, val_acc))


def _take_group(loop: _Loop, group: list, last_step: int) -> list[StepOutcome]:
    """The group's steps: one call of K steps, or single steps (the epoch's last returns the gradients)."""
    if len(group) > 1:
        return _take_steps(loop, group)
    return [_take_step(loop, data, label, with_grads=loop.step + 1 == last_step) for data, label in group]


def _timed(loop: _Loop, kind: str, call):
    """Run one call of the step; the session's first is announced (it compiles) and not timed on the clock;
    in Graph mode neither is the first call of each other compiled graph (with gradients, K steps)."""
    first = loop.step + 1 == loop.first_step
    if first:
        loop.events.emit(PhaseEvent(Phase.COMPILING if loop.config.mode == "graph" else Phase.FIRST_STEP))
    started = time.monotonic()
    result = call()  # the caller's .asnumpy() inside call also synchronises the device
    seconds = time.monotonic() - started
    if first:
        loop.events.emit(PhaseEvent(Phase.TRAINING, first_step_seconds=seconds))
    timed = not first and (kind in loop.compiled or loop.config.mode != "graph")
    loop.compiled.add(kind)
    return result, seconds, timed


def _take_step(loop: _Loop, data, label, with_grads: bool) -> StepOutcome:
    probe = getattr(loop.model.step, "with_grads", None)  # absent when a test substitutes a bare step
    grads_now = with_grads and probe is not None

    def call():
        if grads_now and probe is not None:
            loss, logits, grads = probe(data, label)
        else:
            (loss, logits), grads = loop.model.step(data, label), None
        return float(loss.asnumpy()), logits, grads
    (loss, logits, grads), seconds, timed = _timed(loop, "grads" if grads_now else "single", call)
    samples = int(label.shape[0]) * loop.data.workers
    loop.step += 1
    if timed:
        loop.clock.record(seconds, samples)
    correct = int((logits.asnumpy().argmax(1) == label.asnumpy()).sum())
    return StepOutcome(loop.step, loss, correct, samples, seconds, grads)


def _take_steps(loop: _Loop, group: list) -> list[StepOutcome]:
    """K steps in one graph call over the group's batches (core.training.steps.MultiStep)."""
    xs, ys = MultiStep.batches(group)

    def call():
        losses, correct = loop.model.step.multi(xs, ys)
        return losses.asnumpy(), correct.asnumpy()
    (losses, correct), seconds, timed = _timed(loop, "multi", call)
    samples, per_step = int(group[0][1].shape[0]) * loop.data.workers, seconds / len(group)
    outcomes = []
    for loss, right in zip(losses, correct, strict=False):
        loop.step += 1
        if timed:
            loop.clock.record(per_step, samples)
        outcomes.append(StepOutcome(loop.step, float(loss), int(right), samples, per_step))
    return outcomes


def _close_epoch(loop: _Loop, epoch: int, tally: EpochTally, stopping: EarlyStopping) -> EpochMetrics:
    """Validate, decide whether the epoch is the best so far, and report it (metrics, layer statistics,
    then on_epoch_end with the network)."""
    correct = tally.correct
    if loop.parallel is not None:
        correct = int(round(loop.parallel.sum([correct])[0]))
    seconds, elapsed = time.monotonic() - tally.started - tally.paused, loop.clock.elapsed()  # pauses excluded
    val_loss = val_acc = None
    if loop.data.validation is not None:
        val_loss, val_acc, _, _ = evaluate_batches(loop.model.eval_net, loop.data.validation)
    metrics = EpochMetrics(epoch=epoch, train_loss=tally.loss_sum / tally.seen, train_acc=correct / tally.seen,
                           val_loss=val_loss, val_acc=val_acc, epoch_seconds=seconds,
                           samples_per_s=tally.seen / max(seconds, 1e-9), elapsed=elapsed, step=loop.step,
                           eta=loop.clock.eta(loop.step), best=stopping.update(epoch, val_loss, loop.model.net))
    loop.events.emit(metrics)
    # the validation curve's point at the epoch's end
    if loop.config.validate_every and val_loss is not None and val_acc is not None:
        loop.events.emit(ValidationEvent(loop.step, epoch, val_loss, val_acc))
    loop.events.emit(LayersEvent(epoch, summarize_all(epoch, snapshot(loop.model.net), tally.grads)))
    loop.events.epoch_end(loop.model.net, metrics)
    return metrics
