"""Run one stored run to its end inside this process: the body of a worker process and of the command line.

The caller must have called core.runtime.prepare_process(config.network) before mindspore was imported.
A run with config.workers > 1 is coordinated as that many msrun ranks (core.runs.worker.distributed); each rank
calls execute_rank.
"""
from __future__ import annotations

import os
import time
import traceback
from collections.abc import Iterable

from core.data.folders import validate_mnist_dir
from core.messages import Explained, Message
from core.runs.worker.checkpoints import CheckpointWriter
from core.runs.worker.cluster import ClusterSpec
from core.runs.worker.distributed import run_distributed
from core.runs.worker.heartbeat import Heartbeat
from core.runs.worker.recording import CoordinatorWatch, RankStatus, StoreControl, StoreRecorder
from core.runs.worker.resume import resume_state
from core.runs.worker.start_weights import with_start_file
from core.runs.store import RunStore
from core.runs.sweeps.study import TrialReporter
from core.training.events import Callback
from core.training.loop import TrainResult, train
from core.training.parallel import Parallel

__all__ = ["execute", "execute_rank"]


def execute(store: RunStore, run_id: str, callbacks: Iterable[Callback] = (),
            cluster: ClusterSpec | None = None, data_dir: str | None = None) -> str:
    """Train the stored run, recording everything; returns its final status. Never leaves it 'running'.

    A run that already has a checkpoint (one being resumed) continues after that checkpoint's epoch.
    callbacks observe the run too (the command line's progress bar). A data-parallel run is coordinated
    here (cluster: where its ranks meet). data_dir: this host's copy of the run's data (a Dask worker's), when
    the folder its config names is on another host."""
    run = store.get(run_id)
    if run is None:
        raise ValueError(f"no run {run_id} in {store.where}")
    if run.config.workers > 1:
        return run_distributed(store, run_id, cluster, callbacks)
    store.update(run_id, status="running", started=run.started or time.time(), heartbeat=time.time(),
                 phase="loading data", pid=os.getpid())
    return _record(store, run_id, callbacks, data_dir=data_dir)


def execute_rank(store: RunStore, run_id: str, parallel: Parallel) -> str:
    """One data-parallel rank (started by msrun): rank 0 records the run as a single process does (the
    coordinator's pid stays the run's); the others train in step and keep only their own row."""
    if parallel.rank > 0:
        return _follow(store, run_id, parallel)
    run = store.existing(run_id)
    store.update(run_id, status="running", started=run.started or time.time(), heartbeat=time.time(),
                 phase="loading data")
    return _record(store, run_id, (), parallel)


def _record(store: RunStore, run_id: str, callbacks: Iterable[Callback], parallel: Parallel | None = None,
            data_dir: str | None = None) -> str:
    """Train with the store as observer and control, and record how the run ended."""
    config = store.existing(run_id).config
    recorder = StoreRecorder(store, run_id)
    rank = RankStatus(store, run_id, 0) if parallel is not None else None  # rank 0 keeps a row like the others
    with Heartbeat(store, run_id):
        try:
            folder = validate_mnist_dir(data_dir or config.data_dir)
            resume = resume_state(store, run_id)
            writer = CheckpointWriter(store, run_id, config, resume.epoch if resume else None)
            control = StoreControl(store, run_id, recorder)
            watch = CoordinatorWatch(control) if parallel is not None else None
            run = store.existing(run_id)
            pruning = TrialReporter(store, run) if TrialReporter.wanted(store, run) else None
            observers = [c for c in (rank, recorder, writer, control, pruning, *callbacks) if c is not None]
            result = train(with_start_file(store, store.replay_config(run_id)), folder, observers, watch or control,
                           resume=resume, parallel=parallel)
            if pruning is not None and pruning.pruned:
                result.status, result.said = "pruned", Message("pruned_by_sweep")
            if watch is not None and not watch.alive:
                what = result.said or Message("finished_epochs", {"n": len(result.history)})
                result.said = Message("coordinator_ended", {"what": what})
            if rank is not None:
                rank.finish(result.status, result.said or "", result.net)
            recorder.flush()
            writer.save_final(result)
            return _finish(store, run_id, result)
        except KeyboardInterrupt:
            recorder.flush()
            if rank is not None:
                rank.finish("stopped", Message("interrupted_by_signal"))
            store.finish(run_id, "stopped", Message("interrupted_by_signal"))
            return "stopped"
        except Exception as e:
            recorder.flush()
            if rank is not None:
                rank.finish("failed", e.said if isinstance(e, Explained) else str(e).strip() or type(e).__name__)
            # a person's mistake (a checkpoint that is not one, a missing folder) is said; a fault keeps its traceback
            store.log(run_id, f"failed: {e}" if isinstance(e, Explained) else "failed:\n" + traceback.format_exc())
            store.finish(run_id, "failed", e.said if isinstance(e, Explained) else str(e).strip() or type(e).__name__)
            raise


def _finish(store: RunStore, run_id: str, result: TrainResult) -> str:
    said = result.said or Message("finished_epochs", {"n": len(result.history)})
    path = store.checkpoint_path(run_id)
    if path.exists() and store.shares_database:  # this host's path means nothing on the others
        said = Message("with_checkpoint_shared", {"what": said})
    elif path.exists():
        said = Message("with_checkpoint", {"what": said, "path": path})
    store.log(run_id, f"{result.status}: {said}")
    store.finish(run_id, result.status, said)
    return result.status


def _follow(store: RunStore, run_id: str, parallel: Parallel) -> str:
    """A data-parallel rank other than 0: trains in step with the others, records only its own row."""
    config = store.existing(run_id).config
    status = RankStatus(store, run_id, parallel.rank)
    try:
        resume = resume_state(store, run_id, read_only=True)
        config = with_start_file(store, config)
        result = train(config, validate_mnist_dir(config.data_dir), [status], CoordinatorWatch(), resume=resume,
                       parallel=parallel)
    except BaseException as e:
        status.finish("failed", e.said if isinstance(e, Explained) else str(e).strip() or type(e).__name__)
        raise
    status.finish(result.status, result.said or "", result.net)
    return result.status
