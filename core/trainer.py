"""Training in both MindSpore styles, with one event stream, pause/resume/stop, validation, early stopping
and divergence detection. Nothing here knows about Streamlit or the run store.

Events are dicts with a "kind":
  phase  {phase: "compiling" | "training", ...}
  step   {step, epoch, loss, step_seconds, samples_per_s (timed steps: all but the first), elapsed, eta,
          total_steps}
  epoch  {epoch, train_loss, train_acc, val_loss, val_acc, samples_per_s, elapsed, eta, best}
  layers {epoch, stats: [core.layer_stats.LayerStat]}  weights (and, after epoch 0, the gradients of the
         epoch's last batch) of every parameter
  log    {message}
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from core.config import TrainConfig
from core.data_source import MnistFolder, load_labels, stratified_split
from core.layer_stats import summarize_all

import mindspore as ms  # noqa: E402  (callers run core.runtime.prepare_process first)
import mindspore.nn as nn  # noqa: E402
import mindspore.dataset as ds  # noqa: E402

from core.losses import build_loss  # noqa: E402
from core.networks import build_network  # noqa: E402
from core.optim import build_optimizer  # noqa: E402
from core.pipeline import create_dataset  # noqa: E402
from core.runtime import set_mode  # noqa: E402

Callback = Callable[[dict], None]


class Control(Protocol):
    """What the trainer asks between steps; a run store or a test implements it."""

    def paused(self) -> bool: ...

    def stop_requested(self) -> bool: ...


class NoControl:
    def paused(self) -> bool:
        return False

    def stop_requested(self) -> bool:
        return False


class NetWithLoss(nn.WithLossCell):
    """WithLossCell that also returns the logits, so that accuracy comes for free with each step."""

    def construct(self, data, label):
        logits = self._backbone(data)
        return self._loss_fn(logits, label), logits


class TrainStep(nn.TrainOneStepCell):
    """TrainOneStepCell for a (loss, logits) network: back-propagates the loss only. Data-parallel (the
    parallel context set): gradients are averaged over the workers by TrainOneStepCell's own reducer, and
    the returned loss is the mean over all workers, so every worker takes the same decisions."""

    def __init__(self, network, optimizer):
        super().__init__(network, optimizer)
        self.average_loss = bool(self.reducer_flag)
        if self.average_loss:
            from mindspore.communication import get_group_size
            self.all_sum = ms.ops.AllReduce()
            self.workers = float(get_group_size())

    def update(self, data, label):
        """One step: (loss, logits, gradients), the weights updated."""
        loss, logits = self.network(data, label)
        sens = (ms.ops.fill(loss.dtype, loss.shape, self.sens), ms.ops.zeros_like(logits))
        grads = self.grad(self.network, self.weights)(data, label, sens)
        grads = self.grad_reducer(grads)
        loss = ms.ops.depend(loss, self.optimizer(grads))
        if self.average_loss:
            loss = self.all_sum(loss) / self.workers
        return loss, logits, grads

    def construct(self, data, label):
        loss, logits, _ = self.update(data, label)
        return loss, logits


class TrainStepWithGrads(TrainStep):
    """The same training step, also returning the gradients (for the per-epoch statistics). A separate
    compiled graph, used once per epoch: returning gradients from every step cost ~13 % step time."""

    def construct(self, data, label):
        return self.update(data, label)


class Stepper:
    """A training step in the configured style: step(data, label) -> (loss, logits) updates the weights;
    step.with_grads(data, label) -> (loss, logits, {name: gradient}) does the same and returns the gradients."""

    def __init__(self, step, step_with_grads, names: list[str]):
        self._step, self._with_grads, self.names = step, step_with_grads, names

    def __call__(self, data, label):
        return self._step(data, label)

    def with_grads(self, data, label):
        loss, logits, grads = self._with_grads()(data, label)
        return loss, logits, {n: g.asnumpy() for n, g in zip(self.names, grads)}


class AllSum(nn.Cell):
    """Sum of a tensor over all data-parallel workers (every worker gets the result)."""

    def __init__(self):
        super().__init__()
        self.op = ms.ops.AllReduce()

    def construct(self, x):
        return self.op(x)


@dataclass
class Parallel:
    """This process's place in a data-parallel group (after mindspore.communication.init())."""
    rank: int
    size: int
    all_sum: AllSum = field(default_factory=AllSum)

    def sum(self, values: list[float]) -> list[float]:
        return [float(v) for v in self.all_sum(ms.Tensor(np.asarray(values, np.float32))).asnumpy()]

    def mean(self, x):
        return self.all_sum(x) / self.size


class CollectiveControl:
    """Pause and stop decided together: every `every` steps (and at every poll while paused) the workers
    add up their requests, so all of them pause, resume or stop at the same step. A worker that acted
    alone would leave the others waiting in their next gradient all-reduce."""

    def __init__(self, parallel: Parallel, local: Control, every: int = 10):
        self.parallel, self.local, self.every = parallel, local, every
        self.calls, self.pause, self.stop = 0, False, False

    def paused(self) -> bool:
        self.calls += 1
        if self.pause or (self.calls - 1) % self.every == 0:
            stop, pause = self.parallel.sum([float(self.local.stop_requested()), float(self.local.paused())])
            self.stop, self.pause = stop > 0, pause > 0 and not stop > 0
        return self.pause

    def stop_requested(self) -> bool:
        return self.stop


def make_train_step(config: TrainConfig, net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer,
                    parallel: Parallel | None = None) -> Stepper:
    """A Stepper that updates the weights in the configured style (data-parallel with parallel)."""
    names = [p.name for p in optimizer.parameters]
    if config.style == "cell":
        with_loss = NetWithLoss(net, loss_fn)
        step = TrainStep(with_loss, optimizer)
        step.set_train()

        @functools.cache
        def step_with_grads():  # built (and compiled) only when first needed
            return TrainStepWithGrads(with_loss, optimizer).set_train()
        return Stepper(step, step_with_grads, names)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    reduce_grads = average_loss = None
    if parallel is not None:  # data-parallel: average gradients (and report the mean loss) over the workers
        reduce_grads = nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=parallel.size)
        average_loss = parallel.mean

    def train_step_with_grads(data, label):
        (loss, logits), grads = grad_fn(data, label)
        if reduce_grads is not None:
            grads = reduce_grads(grads)
        optimizer(grads)
        if average_loss is not None:
            loss = average_loss(loss)
        return loss, logits, grads

    def train_step(data, label):
        loss, logits, _ = train_step_with_grads(data, label)
        return loss, logits

    net.set_train()
    return Stepper(train_step, lambda: train_step_with_grads, names)


@dataclass
class TrainResult:
    status: str                      # completed | early_stopped | stopped | diverged
    net: nn.Cell
    history: list[dict] = field(default_factory=list)  # one dict per finished epoch
    best_epoch: int | None = None
    steps: int = 0
    message: str = ""
    diverged_at_step: int | None = None


@dataclass(frozen=True)
class ResumeState:
    """Where an interrupted run picks up: the weights of its last checkpoint and what came before them."""
    epoch: int                         # epochs finished (the checkpoint's)
    step: int                          # steps taken in them
    weights: dict[str, np.ndarray]
    history: tuple[dict, ...] = ()     # their epoch metrics, oldest first
    best_weights: dict[str, np.ndarray] | None = None  # early stopping: the best epoch's weights
    elapsed: float = 0.0               # training seconds already spent


def snapshot(net: nn.Cell) -> dict[str, np.ndarray]:
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


def restore(net: nn.Cell, weights: dict[str, np.ndarray]) -> None:
    params = {k: ms.Parameter(ms.Tensor(v), name=k) for k, v in weights.items()}
    not_loaded, _ = ms.load_param_into_net(net, params, strict_load=True)
    if not_loaded:
        raise RuntimeError(f"could not restore parameters {not_loaded}")


def evaluate_batches(eval_net: nn.Cell, dataset) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Mean loss, accuracy, all logits and labels of a (loss, logits) network over a dataset."""
    eval_net.set_train(False)
    total_loss, n, all_logits, all_labels = 0.0, 0, [], []
    for data, label in dataset.create_tuple_iterator(num_epochs=1):
        loss, logits = eval_net(data, label)
        b = int(label.shape[0])
        total_loss += float(loss.asnumpy()) * b
        n += b
        all_logits.append(logits.asnumpy())
        all_labels.append(label.asnumpy())
    logits = np.concatenate(all_logits) if all_logits else np.zeros((0, 10), np.float32)
    labels = np.concatenate(all_labels) if all_labels else np.zeros((0,), np.int32)
    acc = float((logits.argmax(1) == labels).mean()) if n else float("nan")
    return (total_loss / n if n else float("nan")), acc, logits, labels


def train(config: TrainConfig, folder: MnistFolder, callback: Callback | None = None,
          control: Control | None = None, on_epoch_end: Callable[[nn.Cell, dict], None] | None = None,
          resume: ResumeState | None = None, parallel: Parallel | None = None) -> TrainResult:
    """Train per config on folder's train split (minus a stratified validation part).

    on_epoch_end(net, epoch_metrics) runs after every epoch whose weights are sound (e.g. to checkpoint).
    With resume, training continues after resume.epoch from its weights. Momentum/Adam moments restart
    from zero, and the shuffle order of the remaining epochs differs from an uninterrupted run's.
    With parallel (one of config.workers data-parallel processes), this process trains on its 1/workers
    share of the training images with config.worker_batch samples per step; metrics are global.
    """
    config.validate()
    emit = callback or (lambda event: None)
    control = control or NoControl()
    if parallel is not None:
        control = CollectiveControl(parallel, control)
    set_mode(config.mode)
    ms.set_seed(config.seed)
    done_epochs = resume.epoch if resume else 0
    ds.config.set_seed(config.seed + done_epochs)  # a resumed run does not replay epoch 1's order

    labels = load_labels(folder, "train")
    train_idx, val_idx = stratified_split(labels, config.val_fraction)
    workers, batch = (parallel.size, config.worker_batch) if parallel else (1, config.batch_size)
    if parallel is not None:  # an equal, class-balanced share per worker: every worker takes as many steps
        share = len(train_idx) // workers
        train_idx = np.asarray(train_idx)[parallel.rank::workers][:share]
    if batch > len(train_idx):
        raise ValueError(f"batch size {config.batch_size} is larger than the {len(train_idx) * workers} training "
                         "images: lower the batch size")
    train_ds = create_dataset(folder, "train", train_idx, batch, shuffle=True,
                              num_parallel_workers=config.num_parallel_workers, augment=config.augment)
    val_ds = (create_dataset(folder, "train", val_idx, max(config.batch_size, 256), shuffle=False,
                             num_parallel_workers=config.num_parallel_workers) if len(val_idx) else None)
    steps_per_epoch = train_ds.get_dataset_size()
    total_steps = steps_per_epoch * config.epochs

    net = build_network(config.network)
    if config.amp_level != "O0":
        net = ms.amp.auto_mixed_precision(net, config.amp_level)  # casts in place; names stay the same
    if resume is not None:
        restore(net, resume.weights)
    loss_fn = build_loss(config.loss)
    optimizer = build_optimizer(config, net.trainable_params())
    train_step = make_train_step(config, net, loss_fn, optimizer, parallel)
    eval_net = NetWithLoss(net, loss_fn)

    result = TrainResult("completed", net)
    best_val, best_weights, bad_epochs = math.inf, None, 0
    if resume is not None:
        result.history = [dict(m) for m in resume.history]
        scored = [m for m in result.history if m.get("val_loss") is not None]
        if scored:
            best = min(scored, key=lambda m: m["val_loss"])
            best_val, result.best_epoch = best["val_loss"], best["epoch"]
            bad_epochs = done_epochs - best["epoch"]
        best_weights = resume.best_weights
    # One iterator for all remaining epochs: a fresh order each epoch.
    iterator = train_ds.create_tuple_iterator(num_epochs=max(config.epochs - done_epochs, 1))
    start = time.monotonic() - (resume.elapsed if resume else 0.0)
    train_seconds = 0.0  # excludes pauses and the first (compiling) step
    timed_steps = timed_samples = 0
    step = resume.step if resume else 0
    first_step = step + 1
    emit({"kind": "log", "message": f"{config.network} · {config.style} style · {config.mode} mode · "
                                    f"{len(train_idx) * workers} train / {len(val_idx)} validation images · "
                                    f"{steps_per_epoch} steps per epoch"
                                    + (f" · {workers} workers × {batch} samples per step (global batch "
                                       f"{batch * workers})" if parallel else "")})
    if resume is not None:
        emit({"kind": "log", "message": f"resuming after epoch {done_epochs} (step {step}) from its checkpoint"})
    probe = getattr(train_step, "with_grads", None)  # absent when a test substitutes a bare step
    if resume is None:
        emit({"kind": "layers", "epoch": 0, "stats": summarize_all(0, snapshot(net), None)})
    for epoch in range(done_epochs + 1, config.epochs + 1):
        net.set_train()
        loss_sum, correct, seen, grads = 0.0, 0, 0, None
        last_step_of_epoch = step + steps_per_epoch
        epoch_start = time.monotonic()
        for data, label in iterator:  # the shared iterator ends each pass at the epoch boundary
            while control.paused() and not control.stop_requested():
                time.sleep(0.1)
            if control.stop_requested():
                result.status, result.message = "stopped", f"stopped by request at step {step}"
                break
            if step + 1 == first_step:
                emit({"kind": "phase", "phase": "compiling" if config.mode == "graph" else "first_step"})
            t0 = time.monotonic()
            if probe is not None and step + 1 == last_step_of_epoch:
                loss, logits, grads = probe(data, label)
            else:
                loss, logits = train_step(data, label)
            loss_value = float(loss.asnumpy())  # also synchronises the device
            dt = time.monotonic() - t0
            b = int(label.shape[0]) * workers  # samples of this step, over all workers
            step += 1
            if step == first_step:
                emit({"kind": "phase", "phase": "training", "first_step_seconds": dt})
            else:
                train_seconds += dt
                timed_steps += 1
                timed_samples += b
            if not math.isfinite(loss_value):
                result.status, result.diverged_at_step = "diverged", step
                result.message = (f"loss became {loss_value} at step {step} (epoch {epoch}): training "
                                  "diverged. Lower the learning rate.")
                emit({"kind": "log", "message": result.message})
                break
            labels_np = label.asnumpy()
            correct += int((logits.asnumpy().argmax(1) == labels_np).sum())  # this worker's; summed below
            loss_sum += loss_value * b
            seen += b
            mean_step = train_seconds / timed_steps if timed_steps else dt
            emit({"kind": "step", "step": step, "epoch": epoch, "loss": loss_value, "step_seconds": dt,
                  "samples_per_s": (timed_samples / train_seconds if train_seconds > 0
                                    else b / dt if dt > 0 else 0.0),
                  "elapsed": time.monotonic() - start, "eta": mean_step * (total_steps - step),
                  "total_steps": total_steps})
        result.steps = step
        if result.status in ("stopped", "diverged") or seen == 0:
            break
        if parallel is not None:
            correct = int(round(parallel.sum([correct])[0]))
        metrics = {"epoch": epoch, "train_loss": loss_sum / seen, "train_acc": correct / seen,
                   "val_loss": None, "val_acc": None, "epoch_seconds": time.monotonic() - epoch_start,
                   "samples_per_s": seen / max(time.monotonic() - epoch_start, 1e-9),
                   "elapsed": time.monotonic() - start, "step": step}
        if val_ds is not None:
            metrics["val_loss"], metrics["val_acc"], _, _ = evaluate_batches(eval_net, val_ds)
        mean_step = train_seconds / timed_steps if timed_steps else 0.0
        metrics["eta"] = mean_step * (total_steps - step)
        improved = metrics["val_loss"] is not None and metrics["val_loss"] < best_val
        if improved:
            best_val, result.best_epoch, bad_epochs = metrics["val_loss"], epoch, 0
            if config.early_stopping:
                best_weights = snapshot(net)
        else:
            bad_epochs += 1
        metrics["best"] = improved
        result.history.append(metrics)
        emit({"kind": "epoch", **metrics})
        emit({"kind": "layers", "epoch": epoch, "stats": summarize_all(epoch, snapshot(net), grads)})
        if on_epoch_end is not None:
            on_epoch_end(net, metrics)
        if config.early_stopping and bad_epochs >= config.patience:
            result.status = "early_stopped"
            result.message = (f"validation loss did not improve for {config.patience} epochs; "
                              f"restored the weights of epoch {result.best_epoch}")
            emit({"kind": "log", "message": result.message})
            break
    if config.early_stopping and best_weights is not None and result.status != "diverged":
        restore(net, best_weights)
    net.set_train(False)
    return result
