"""Run one stored run to its end inside this process: the body of a worker and of the command-line trainer.

The caller must have called core.runtime.prepare_process(config.network) before mindspore was imported.
"""
from __future__ import annotations

import os
import threading
import time
import traceback
from typing import Callable

from core.store import RunStore, pid_alive

FLUSH_EVERY_S = 0.25   # step metrics are batched into a few writes per second
CONTROL_EVERY_S = 0.2  # how often pause/stop requests are read from the store
HEARTBEAT_EVERY_S = 2.0
WORKER_EVERY_S = 1.0   # how often a data-parallel worker updates its row


class StoreRecorder:
    """Trainer callback that writes the event stream to the store, batching step rows."""

    def __init__(self, store: RunStore, run_id: str, echo: Callable[[dict], None] | None = None):
        self.store, self.run_id, self.echo = store, run_id, echo
        self.pending: list[tuple] = []
        self.progress: dict = {}
        self.last_flush = 0.0

    def __call__(self, event: dict) -> None:
        kind = event["kind"]
        if kind == "step":
            self.pending.append((event["step"], event["epoch"], event["loss"], event["elapsed"]))
            self.progress.update(step=event["step"], epoch=event["epoch"], samples_per_s=event["samples_per_s"],
                                 eta=event["eta"], total_steps=event["total_steps"])
            if time.monotonic() - self.last_flush >= FLUSH_EVERY_S:
                self.flush()
        elif kind == "epoch":
            self.flush()
            self.store.add_epoch(self.run_id, event)
            if event.get("best"):
                self.store.update(self.run_id, best_val_acc=event["val_acc"], best_val_loss=event["val_loss"],
                                  best_epoch=event["epoch"])
            elif event.get("val_acc") is None:
                self.store.update(self.run_id, best_epoch=event["epoch"])
            self.store.log(self.run_id, _epoch_line(event))
        elif kind == "phase":
            self.flush()
            self.store.update(self.run_id, phase=event["phase"])
            if event["phase"] == "training" and "first_step_seconds" in event:
                self.store.log(self.run_id, f"first step (including graph compilation) took "
                                            f"{event['first_step_seconds']:.2f} s")
        elif kind == "layers":
            self.store.add_layer_stats(self.run_id, event["stats"])
        elif kind == "log":
            self.store.log(self.run_id, event["message"])
        if self.echo is not None:
            self.echo(event)

    def flush(self) -> None:
        if self.pending or self.progress:
            self.store.add_steps(self.run_id, self.pending, **self.progress)
        self.pending, self.progress = [], {}
        self.last_flush = time.monotonic()


class StoreControl:
    """Reads pause/stop requests from the store, at most every CONTROL_EVERY_S, and mirrors the status."""

    def __init__(self, store: RunStore, run_id: str):
        self.store, self.run_id = store, run_id
        self.request, self.checked = "run", 0.0

    def _refresh(self) -> str:
        if time.monotonic() - self.checked >= CONTROL_EVERY_S:
            run = self.store.get(self.run_id)
            new = run.request if run else "stop"
            if new != self.request and new in ("pause", "run"):
                self.store.update(self.run_id, status="paused" if new == "pause" else "running")
                self.store.log(self.run_id, "paused" if new == "pause" else "resumed")
            self.request, self.checked = new, time.monotonic()
        return self.request

    def paused(self) -> bool:
        return self._refresh() == "pause"

    def stop_requested(self) -> bool:
        return self._refresh() == "stop"


def _epoch_line(m: dict) -> str:
    val = "" if m.get("val_acc") is None else f"  val loss {m['val_loss']:.4f}  val acc {m['val_acc']:.4f}"
    return (f"epoch {m['epoch']}: train loss {m['train_loss']:.4f}  train acc {m['train_acc']:.4f}{val}  "
            f"({m['epoch_seconds']:.1f} s, {m['samples_per_s']:.0f} samples/s)")


def keep_heartbeat(store: RunStore, run_id: str, done: threading.Event) -> None:
    """Mark the run alive every HEARTBEAT_EVERY_S until done is set (run it in a daemon thread)."""
    while not done.wait(HEARTBEAT_EVERY_S):
        try:
            store.update(run_id, heartbeat=time.time())
        except Exception as e:  # a locked or vanished store must not kill training; the next beat retries
            print(f"heartbeat for {run_id} failed: {e}", flush=True)


class CheckpointWriteError(OSError):
    """A checkpoint could not be written (disk full, folder unwritable); the message says what is intact."""


def _resume_state(store: RunStore, run_id: str, ckpt_path, best_path, read_only: bool = False):
    """The trainer's ResumeState from the run's checkpoint, dropping metrics recorded after it (the
    unfinished epoch). None for a run that never wrote a checkpoint (a fresh run). read_only: for the
    data-parallel workers besides rank 0, which read the same state but leave the store to rank 0."""
    if not ckpt_path.exists():
        return None
    from core import checkpoint
    from core.trainer import ResumeState, snapshot
    model = checkpoint.load(ckpt_path)
    epoch = int(model.meta.get("epoch", 0))
    dropped = 0 if read_only else store.truncate_after(run_id, epoch)
    history = tuple(m for m in store.epochs(run_id) if m["epoch"] <= epoch)
    step = int(model.meta.get("step") or (history[-1].get("step") if history else 0) or 0)
    best = snapshot(checkpoint.load(best_path).net) if best_path.exists() else None
    if not read_only:
        store.log(run_id, f"resuming from the checkpoint of epoch {epoch} (step {step})"
                          + (f"; dropped {dropped} step records of the unfinished epoch" if dropped else ""))
    return ResumeState(epoch=epoch, step=step, weights=snapshot(model.net), history=history, best_weights=best,
                       elapsed=float(history[-1]["elapsed"] or 0.0) if history else 0.0)


class WorkerStatus:
    """Trainer callback of a data-parallel worker: keeps its row in the store's worker table current
    (at most every WORKER_EVERY_S), then passes the event on."""

    def __init__(self, store: RunStore, run_id: str, rank: int, inner: Callable[[dict], None] | None = None):
        self.store, self.run_id, self.rank, self.inner, self.last = store, run_id, rank, inner, 0.0
        self.step = self.epoch = 0
        import socket
        store.set_worker(run_id, rank, pid=os.getpid(), host=socket.gethostname(), state="starting",
                         message="loading data")

    def __call__(self, event: dict) -> None:
        kind = event["kind"]
        if kind == "step":
            self.step, self.epoch = event["step"], event["epoch"]
        if kind == "step" and time.monotonic() - self.last >= WORKER_EVERY_S:
            self.store.set_worker(self.run_id, self.rank, state="training", step=event["step"],
                                  epoch=event["epoch"], message="")
            self.last = time.monotonic()
        elif kind == "phase":
            self.store.set_worker(self.run_id, self.rank, state="training", message=event["phase"])
        if self.inner is not None:
            self.inner(event)

    def finish(self, state: str, message: str = "", net=None) -> None:
        """The final state; with net, a checksum of its weights (equal on every worker of a sound run)."""
        extra = {"weights_sha256": weights_checksum(net)} if net is not None else {}
        self.store.set_worker(self.run_id, self.rank, state=state, message=message, step=self.step,
                              epoch=self.epoch, **extra)


def weights_checksum(net) -> str:
    import hashlib
    h = hashlib.sha256()
    for p in sorted(net.get_parameters(), key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(p.asnumpy().tobytes())
    return h.hexdigest()


class CoordinatorWatch:
    """Control of a data-parallel worker: asks to stop when the process coordinating the run is gone
    (killed), so that no worker trains on as an orphan; otherwise defers to `inner`."""

    def __init__(self, inner=None):
        from core.distributed import COORDINATOR_ENV
        self.inner, self.pid = inner, int(os.environ.get(COORDINATOR_ENV) or 0)
        self.checked, self.alive = 0.0, True

    def paused(self) -> bool:
        return self.inner.paused() if self.inner else False

    def stop_requested(self) -> bool:
        if self.pid and time.monotonic() - self.checked > 1.0:
            self.alive, self.checked = pid_alive(self.pid), time.monotonic()
        return not self.alive or (self.inner.stop_requested() if self.inner else False)


def _execute_follower(store: RunStore, run_id: str, parallel) -> str:
    """A data-parallel worker other than rank 0: trains in step with the others, records only its own row."""
    from core.data_source import validate_mnist_dir
    from core.trainer import train
    config = store.get(run_id).config
    status = WorkerStatus(store, run_id, parallel.rank)
    try:
        ckpt_path = store.checkpoint_path(run_id)
        resume = _resume_state(store, run_id, ckpt_path, ckpt_path.with_name("best.ckpt"), read_only=True)
        result = train(config, validate_mnist_dir(config.data_dir), status, CoordinatorWatch(), resume=resume,
                       parallel=parallel)
    except BaseException as e:
        status.finish("failed", str(e).strip() or type(e).__name__)
        raise
    status.finish(result.status, result.message, result.net)
    return result.status


def execute(store: RunStore, run_id: str, echo: Callable[[dict], None] | None = None, parallel=None,
            cluster=None) -> str:
    """Train the stored run, recording everything; returns its final status. Never leaves it 'running'.

    A run that already has a checkpoint (one being resumed) continues after that checkpoint's epoch.
    A run with config.workers > 1 is coordinated here as that many msrun workers (cluster: a
    core.distributed.ClusterSpec); each of them calls execute again with its `parallel` place."""
    run = store.get(run_id)
    if run is None:
        raise ValueError(f"no run {run_id} in {store.db_path}")
    config = run.config
    if parallel is None and config.workers > 1:
        from core.distributed import run_distributed
        return run_distributed(store, run_id, cluster, echo)
    if parallel is not None and parallel.rank > 0:
        return _execute_follower(store, run_id, parallel)
    store.update(run_id, status="running", started=run.started or time.time(), heartbeat=time.time(),
                 phase="loading data", **({} if parallel else {"pid": os.getpid()}))  # the coordinator's pid stays
    done = threading.Event()
    beat = threading.Thread(target=keep_heartbeat, args=(store, run_id, done), daemon=True)
    beat.start()
    recorder = StoreRecorder(store, run_id, echo)
    worker = None
    if parallel is not None:  # rank 0: records the run, and its own worker row like the others
        worker = WorkerStatus(store, run_id, 0, recorder)
    ckpt_path = store.checkpoint_path(run_id)
    best_path = ckpt_path.with_name("best.ckpt")
    saved = {"epoch": None}
    try:
        from core import checkpoint
        from core.data_source import validate_mnist_dir
        from core.trainer import train

        folder = validate_mnist_dir(config.data_dir)
        resume = _resume_state(store, run_id, ckpt_path, best_path)
        if resume is not None:
            saved["epoch"] = resume.epoch

        def save(net, metrics):
            meta = {"run_id": run_id, "epoch": metrics["epoch"], "step": metrics.get("step")}
            try:
                checkpoint.save(net, config, ckpt_path, meta)
                if config.early_stopping and metrics.get("best"):
                    checkpoint.save(net, config, best_path, meta)  # what a resumed run restores at the end
            except OSError as e:
                kept = (f"the checkpoint of epoch {saved['epoch']} is intact" if saved["epoch"] is not None
                        else "no earlier checkpoint exists")
                raise CheckpointWriteError(
                    f"could not write the checkpoint of epoch {metrics['epoch']} to {ckpt_path.parent} "
                    f"({e.strerror or e}); {kept}. Free disk space or make the folder writable, then resume "
                    "the run.") from e
            saved["epoch"] = metrics["epoch"]
            store.update(run_id, checkpoint=str(ckpt_path))

        control = StoreControl(store, run_id)
        watch = CoordinatorWatch(control) if parallel else None
        result = train(config, folder, worker or recorder, watch or control, on_epoch_end=save, resume=resume,
                       parallel=parallel)
        if watch is not None and not watch.alive:
            result.message += " (the process coordinating the workers had ended)"
        if worker is not None:
            worker.finish(result.status, result.message, result.net)
        recorder.flush()
        # The last epoch's checkpoint already holds a completed run's weights. Otherwise save the final
        # ones: the best epoch's after early stopping, or where a stop request ended the run. A diverged
        # run keeps its last good epoch.
        already_saved = result.status == "completed" and not config.early_stopping
        if result.status != "diverged" and result.steps and not already_saved:
            last = result.history[-1] if result.history else {"epoch": 0, "step": 0}
            save(result.net, {"epoch": last["epoch"], "step": last.get("step")})
        message = result.message or f"finished {len(result.history)} epochs"
        if ckpt_path.exists():
            message += f"; checkpoint: {ckpt_path}"
        store.log(run_id, f"{result.status}: {message}")
        store.finish(run_id, result.status, message)
        return result.status
    except KeyboardInterrupt:
        recorder.flush()
        if worker is not None:
            worker.finish("stopped", "interrupted")
        store.finish(run_id, "stopped", "the training process was interrupted (Ctrl-C or a forced stop)")
        return "stopped"
    except Exception as e:
        recorder.flush()
        if worker is not None:
            worker.finish("failed", str(e).strip() or type(e).__name__)
        store.log(run_id, "failed:\n" + traceback.format_exc())
        store.finish(run_id, "failed", str(e).strip() or type(e).__name__)
        raise
    finally:
        done.set()
