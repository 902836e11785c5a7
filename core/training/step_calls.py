"""Taking steps: how many the next graph call takes (K where nothing needs them one at a time: the lesson's
Step ×n and slow motion, a learning-rate change, a validation and the epoch's last step take single steps), the
wait before a call (pause, slow motion, a new learning rate), and the calls themselves, timed."""
from __future__ import annotations

import time

from core.training.control import slow_down, wait_while_paused
from core.training.events import Phase, PhaseEvent
from core.training.state import EpochTally, LoopState, StepOutcome
from core.training.steps import MultiStep

__all__ = ["group_size", "wait_for_turn", "take_group"]


def group_size(loop: LoopState, last_step: int) -> int:
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


def wait_for_turn(loop: LoopState, tally: EpochTally) -> bool:
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
