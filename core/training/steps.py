"""One training step in each MindSpore style, and its twin that also returns the gradients.

Cell style: a WithLossCell subclass (NetWithLoss) + a TrainOneStepCell subclass (TrainStep).
Functional style: ms.value_and_grad(..., has_aux=True) + the optimizer.
"""
from __future__ import annotations

import functools

import mindspore as ms
import mindspore.nn as nn

from core.config import TrainConfig
from core.model.evaluation import NetWithLoss
from core.training.parallel import Parallel

__all__ = ["TrainStep", "TrainStepWithGrads", "MultiStep", "Stepper", "make_train_step"]


class TrainStep(nn.TrainOneStepCell):
    """TrainOneStepCell for a (loss, logits) network: back-propagates the loss only. Data-parallel (the
    parallel context set): gradients are averaged over the workers by TrainOneStepCell's own reducer, and
    the returned loss is the mean over all workers, so every worker takes the same decisions."""

    def __init__(self, network, optimizer):
        super().__init__(network, optimizer)
        self.average_loss = bool(self.reducer_flag)
        if self.average_loss:
            from mindspore.communication import get_group_size  # deferred: data-parallel runs only
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
    compiled graph, used once per epoch: returning (and copying out) the gradients at every step would cost
    6 % of the step time for either network (`python -m bench.step_variants`, bench/results/step_variants.json)."""

    def construct(self, data, label):
        return self.update(data, label)


class MultiStep(nn.Cell):
    """K training steps in one graph call: construct loops over K batches and returns each step's loss and
    number of correct predictions. Measured: the same weights bit for bit as K separate calls, and less runtime
    overhead per step (LeNet-5 15.6 -> 9.0 ms, the MLP 4.6 -> 3.5 ms at K = 8: bench/kstep_alone.py). Graph
    mode unrolls the loop, so compiling takes longer with K.

    The batches come as two tuples of K tensors marked mutable (see `batches`), not as one stacked (K, B, ...)
    tensor: indexing a stacked tensor inside the graph is a StridedSlice copy per batch, 29 % of the MLP's op
    time in MindSpore's profiler; with tuples the MLP's step went 3.99 -> 3.03 ms and LeNet-5's 8.78 -> 7.90 ms
    (same weights bit for bit, compiled faster). Without `mutable`, a tuple of tensors is a constant of the
    graph: every new batch compiled it again (~2 s a call)."""

    def __init__(self, step: nn.Cell, k: int):
        super().__init__(auto_prefix=False)  # the weights keep their names
        self.step, self.k = step, k

    def construct(self, xs, ys):
        losses, correct = [], []
        for i in range(self.k):
            loss, logits = self.step(xs[i], ys[i])
            losses.append(loss)
            correct.append((logits.argmax(1) == ys[i]).astype(ms.int32).sum())
        return ms.ops.stack(losses), ms.ops.stack(correct)

    @staticmethod
    def batches(pairs) -> tuple:
        """MultiStep's two inputs from K (data, label) pairs of tensors."""
        return ms.mutable(tuple(data for data, _ in pairs)), ms.mutable(tuple(label for _, label in pairs))


class Stepper:
    """A training step in the configured style: step(data, label) -> (loss, logits) updates the weights;
    step.with_grads(data, label) -> (loss, logits, {name: gradient}) does the same and returns the gradients;
    step.multi(xs, ys) -> (losses, correct) takes step.k steps in one call (None when k is 1)."""

    def __init__(self, step, step_with_grads, names: list[str], multi=None, k: int = 1):
        self._step, self._with_grads, self.names = step, step_with_grads, names
        self._multi, self.k = multi, k if multi is not None else 1

    def __call__(self, data, label):
        return self._step(data, label)

    def multi(self, xs, ys):
        return self._multi()(xs, ys)

    def compile(self, data, label) -> None:
        """Compile the one-step graph, and the K-step one, for batches shaped like (data, label), without
        running them (a Cell style step's: the weights do not move)."""
        self._step.compile(data, label)
        if self._multi is not None:
            self._multi().compile(*MultiStep.batches([(data, label)] * self.k))

    def with_grads(self, data, label):
        loss, logits, grads = self._with_grads()(data, label)
        return loss, logits, {n: g.asnumpy() for n, g in zip(self.names, grads, strict=False)}


def make_train_step(config: TrainConfig, net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer,
                    parallel: Parallel | None = None, steps_per_epoch: int = 1,
                    compiled_ahead: bool = False) -> Stepper:
    """A Stepper that updates the weights in the configured style (data-parallel with parallel); compiled_ahead:
    its graphs are compiled before its run (TrainConfig.steps_per_call_for)."""
    names = [p.name for p in optimizer.parameters]
    if config.style == "cell":
        k = config.steps_per_call_for(parallel is not None, steps_per_epoch, compiled_ahead)
        return _cell_step(NetWithLoss(net, loss_fn), optimizer, names, k)
    return _functional_step(net, loss_fn, optimizer, names, parallel)


def _cell_step(with_loss: NetWithLoss, optimizer: nn.Optimizer, names: list[str], k: int) -> Stepper:
    step = TrainStep(with_loss, optimizer)
    step.set_train()

    @functools.cache
    def step_with_grads():  # built (and compiled) only when first needed
        return TrainStepWithGrads(with_loss, optimizer).set_train()

    @functools.cache
    def multi():
        return MultiStep(step, k).set_train()
    return Stepper(step, step_with_grads, names, multi if k > 1 else None, k)


def _functional_step(net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer, names: list[str],
                     parallel: Parallel | None) -> Stepper:
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
