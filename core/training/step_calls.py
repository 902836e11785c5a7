"""Taking steps: one graph call of K steps or single steps (how many is core.training.step_planner's answer),
timed, the session's first call announced (it compiles)."""
from __future__ import annotations

import time

from core.training.events import Phase, PhaseEvent
from core.training.state import LoopState, StepOutcome
from core.training.steps import MultiStep

__all__ = ["take_group"]


def take_group(loop: LoopState, group: list, last_step: int) -> list[StepOutcome]:
    """The group's steps: one call of K steps, or single steps (the epoch's last returns the gradients)."""
    if len(group) > 1:
        return _take_steps(loop, group)
    return [_take_step(loop, data, label, with_grads=loop.step + 1 == last_step) for data, label in group]


def _timed(loop: LoopState, kind: str, call):
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


def _take_step(loop: LoopState, data, label, with_grads: bool) -> StepOutcome:
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


def _take_steps(loop: LoopState, group: list) -> list[StepOutcome]:
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
