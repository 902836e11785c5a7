"""The run store as the trainer's observer and control: callbacks that record a run, and its requests.

StoreRecorder writes the event stream (step rows batched into a few writes per second); StoreControl reads
pause/stop requests; RankStatus keeps a data-parallel rank's row current; CoordinatorWatch stops a rank
whose coordinating process is gone.
"""
from __future__ import annotations

import math
import os
import socket
import time

from core.i18n import counted
from core.live_settings import OPTIMIZER_SETTINGS
from core.messages import Message
from core.runs.worker.cluster import COORDINATOR_ENV
from core.runs.processes import pid_alive
from core.runs.rows import RunRequests
from core.runs.store.roles import RunRecords
from core.training.run_control import Control
from core.training.events import (Callback, EpochMetrics, LayersEvent, SettingEvent, LogEvent, PhaseEvent,
                                  StepEvent, ValidationEvent)
from core.training.weight_arrays import weights_checksum

__all__ = ["StoreRecorder", "StoreControl", "RankStatus", "CoordinatorWatch", "epoch_line"]

FLUSH_EVERY_S = 0.25   # step metrics are batched into a few writes per second
CONTROL_EVERY_S = 0.2  # how often pause/stop requests are read from the store
RANK_EVERY_S = 1.0     # how often a data-parallel rank updates its row


class StoreRecorder(Callback):
    """Writes the event stream to the store, batching step rows."""

    def __init__(self, store: RunRecords, run_id: str):
        self.store, self.run_id = store, run_id
        run = store.get(run_id)  # a resumed run's best figures so far
        self.best_acc = run.best_val_acc if run is not None else None
        self.best_loss = run.best_val_loss if run is not None else None
        self.pending: list[tuple] = []
        self.progress: dict = {}
        self.last_flush = 0.0
        self.first_step_written = False

    def on_step(self, e: StepEvent) -> None:
        self.pending.append((e.step, e.epoch, e.loss, e.elapsed))
        self.progress.update(step=e.step, epoch=e.epoch, samples_per_s=e.samples_per_s, eta=e.eta,
                             total_steps=e.total_steps)
        # The session's first step is written at once: the next call may compile for seconds (K steps per
        # call), and a viewer who just pressed Start waits for it (bench/start_latency.py: it reached the
        # page 1.8-3.1 s after it was taken while it waited for the next flush).
        if not self.first_step_written or time.monotonic() - self.last_flush >= FLUSH_EVERY_S:
            self.flush()
            self.first_step_written = True

    def on_epoch(self, e: EpochMetrics) -> None:
        self.flush()
        self.store.add_epoch(self.run_id, e)
        if e.best or e.val_acc is None:  # the best epoch: the lowest validation loss (without validation: the last)
            self.store.update(self.run_id, best_epoch=e.epoch)
        if e.val_loss is not None and e.val_acc is not None:
            self._best_so_far(e.val_loss, e.val_acc)
        self.store.log(self.run_id, epoch_line(e))

    def _best_so_far(self, val_loss: float, val_acc: float) -> None:
        """The best validation accuracy and loss of every validation so far, between epochs included. Only finite
        values count: a script's NaN or ±inf is kept in its epoch's row, never as its run's best."""
        better = {}
        if math.isfinite(val_acc) and (self.best_acc is None or val_acc > self.best_acc):
            better["best_val_acc"] = self.best_acc = val_acc
        if math.isfinite(val_loss) and (self.best_loss is None or val_loss < self.best_loss):
            better["best_val_loss"] = self.best_loss = val_loss
        if not better:
            return
        self.store.update(self.run_id, **better)

    def on_phase(self, e: PhaseEvent) -> None:
        self.flush()
        self.store.update(self.run_id, phase=e.phase)
        if e.phase == "training" and e.first_step_seconds is not None:
            self.store.log(self.run_id, f"first step (including graph compilation) took "
                                        f"{e.first_step_seconds:.2f} s")

    def on_layers(self, e: LayersEvent) -> None:
        self.store.add_layer_stats(self.run_id, e.stats)

    def on_validation(self, e: ValidationEvent) -> None:
        self.store.add_validation(self.run_id, e)
        if e.val_loss is not None and e.val_acc is not None:  # the studio's own validations record both
            self._best_so_far(e.val_loss, e.val_acc)

    def on_setting(self, e: SettingEvent) -> None:
        self.flush()
        self.store.add_setting_change(self.run_id, e)
        self.store.log(self.run_id, f"{e.setting.replace('_', ' ')} {e.value:g} from step {e.step}"
                                    + (" (replayed from the config)" if e.replayed else ""))

    def on_log(self, e: LogEvent) -> None:
        self.store.log(self.run_id, e.message)

    def flush(self) -> None:
        if self.pending or self.progress:
            self.store.add_steps(self.run_id, self.pending, **self.progress)
        self.pending, self.progress = [], {}
        self.last_flush = time.monotonic()


def epoch_line(m: EpochMetrics) -> str:
    """An epoch in the run's log; a tracked script's epoch may lack accuracy, time or speed."""
    acc = f"  train acc {m.train_acc:.4f}" if m.train_acc is not None and math.isfinite(m.train_acc) else ""
    val = "" if m.val_acc is None or m.val_loss is None else f"  val loss {m.val_loss:.4f}  val acc {m.val_acc:.4f}"
    timing = ("" if m.epoch_seconds is None else f"  ({m.epoch_seconds:.1f} s"
              + ("" if m.samples_per_s is None else f", {m.samples_per_s:.0f} samples/s") + ")")
    return f"epoch {m.epoch}: train loss {m.train_loss:.4f}{acc}{val}{timing}"


class StoreControl(Control, Callback):
    """The run's requests, read from the store at most every CONTROL_EVERY_S: pause, resume and stop (its
    status mirrors them), a lesson's Step (train n steps, then pause), slow motion's delay and new optimizer
    settings (core/live_settings.py). A callback too: it counts the steps, so that a Step pauses at exactly the
    step asked for."""

    def __init__(self, store: RunRecords, run_id: str, recorder: StoreRecorder | None = None):
        self.store, self.run_id, self.recorder = store, run_id, recorder
        self.request, self.checked = "run", 0.0
        self.step, self.delay = 0, 0.0
        self.pause_at: int | None = None
        self.settings: dict[str, float] = {}  # optimizer settings taken from the store, not handed over yet

    def on_step(self, e: StepEvent) -> None:
        self.step = e.step

    def _refresh(self) -> str:
        if time.monotonic() - self.checked >= CONTROL_EVERY_S:
            asked = self.store.requests(self.run_id)
            if asked is None:
                self.request = "stop"
            else:
                self._follow(asked)
            self.checked = time.monotonic()
        return self.request

    def _follow(self, asked: RunRequests) -> None:
        steps = asked.asked.get("step")
        if steps:
            self.pause_at = self.step + int(steps)
            self.store.take(self.run_id, "step", steps)
            self.store.log(self.run_id, f"stepping {counted(int(steps), 'step')}, then pausing")
        if asked.request != self.request and asked.request in ("pause", "run"):
            self._mirror(asked.request)
        self.request, self.delay = asked.request, asked.step_delay
        # Optimizer settings are taken at the step that uses them (setting_requests), not here: while the run is
        # paused the store keeps them as asked, so every page says the rate of the next step.
        self.settings = {s: asked.asked[s] for s in OPTIMIZER_SETTINGS if s in asked.asked}

    def _mirror(self, request: str) -> None:
        if request == "pause":
            self.pause_at = None
            if self.recorder is not None:
                self.recorder.flush()  # the page shows the very step it paused at
        self.store.update(self.run_id, status="paused" if request == "pause" else "running")
        self.store.log(self.run_id, f"paused at step {self.step}" if request == "pause" else "resumed")

    def paused(self) -> bool:
        step_done = self._refresh() == "run" and self.pause_at is not None and self.step >= self.pause_at
        # the Step is done: pause, unless a Stop was asked meanwhile (it stays asked: store.request)
        if step_done and self.store.request(self.run_id, "pause").code == "requested":
            self._mirror("pause")
            self.request = "pause"
        return self.request == "pause"

    def stop_requested(self) -> bool:
        return self._refresh() == "stop"

    def step_delay(self) -> float:
        self._refresh()
        return self.delay

    def setting_requests(self) -> dict[str, float]:
        self._refresh()
        settings, self.settings = self.settings, {}
        for setting, value in settings.items():
            self.store.take(self.run_id, setting, value)
        return settings

    def fine_grained(self) -> bool:
        return self.pause_at is not None or self.delay > 0


class RankStatus(Callback):
    """Keeps a data-parallel rank's row in the store current (at most every RANK_EVERY_S)."""

    def __init__(self, store: RunRecords, run_id: str, rank: int):
        self.store, self.run_id, self.rank, self.last = store, run_id, rank, 0.0
        self.step = self.epoch = 0
        store.set_rank(run_id, rank, pid=os.getpid(), host=socket.gethostname(), state="starting",
                       message=Message("phase_loading_data"))

    def on_step(self, e: StepEvent) -> None:
        self.step, self.epoch = e.step, e.epoch
        if time.monotonic() - self.last >= RANK_EVERY_S:
            self.store.set_rank(self.run_id, self.rank, state="training", step=e.step, epoch=e.epoch, message="")
            self.last = time.monotonic()

    def on_phase(self, e: PhaseEvent) -> None:
        self.store.set_rank(self.run_id, self.rank, state="training", message=Message(f"phase_{e.phase}"))

    def finish(self, state: str, message: str | Message = "", net=None) -> None:
        """The final state; with net, a checksum of its weights (equal on every rank of a sound run)."""
        extra = {"weights_sha256": weights_checksum(net)} if net is not None else {}
        self.store.set_rank(self.run_id, self.rank, state=state, message=message, step=self.step,
                            epoch=self.epoch, **extra)


class CoordinatorWatch(Control):
    """Control of a data-parallel rank: asks to stop when the process coordinating the run is gone
    (killed), so that no rank trains on as an orphan; otherwise defers to `inner`."""

    def __init__(self, inner: Control | None = None):
        self.inner, self.pid = inner, int(os.environ.get(COORDINATOR_ENV) or 0)
        self.checked, self.alive = 0.0, True

    def paused(self) -> bool:
        return self.inner.paused() if self.inner else False

    def step_delay(self) -> float:
        return self.inner.step_delay() if self.inner else 0.0

    def stop_requested(self) -> bool:
        if self.pid and time.monotonic() - self.checked > 1.0:
            self.alive, self.checked = pid_alive(self.pid), time.monotonic()
        return not self.alive or (self.inner.stop_requested() if self.inner else False)
