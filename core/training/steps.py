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

__all__ = ["TrainStep", "TrainStepWithGrads", "Stepper", "make_train_step"]


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


def make_train_step(config: TrainConfig, net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer,
                    parallel: Parallel | None = None) -> Stepper:
    """A Stepper that updates the weights in the configured style (data-parallel with parallel)."""
    names = [p.name for p in optimizer.parameters]
    if config.style == "cell":
        return _cell_step(NetWithLoss(net, loss_fn), optimizer, names)
    return _functional_step(net, loss_fn, optimizer, names, parallel)


def _cell_step(with_loss: NetWithLoss, optimizer: nn.Optimizer, names: list[str]) -> Stepper:
    step = TrainStep(with_loss, optimizer)
    step.set_train()

    @functools.cache
    def step_with_grads():  # built (and compiled) only when first needed
        return TrainStepWithGrads(with_loss, optimizer).set_train()
    return Stepper(step, step_with_grads, names)


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
