"""The studio's training workers train below the pages where STUDIO_TRAINING_NICE asks for it
(core/runs/launch/priority.py): a worker from the pool and a fresh one run every thread at that niceness, in a
session whose autogroup has it too; unset or 0, they keep the app's priority."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.launch.priority import DEFAULT_NICE, TRAINING_NICE_ENV, training_nice
from tests.support.helpers import wait_for


def _thread_nices(pid: int) -> set[int]:
    """The niceness of each of the process's threads (/proc/PID/task/TID/stat, field 19). A thread that ends
    between the listing and its reading has no niceness left to show, and is left out."""
    nices = set()
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            after_name = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # that thread has ended
            continue
        nices.add(int(after_name[16]))  # fields from the state (3rd) on: the 19th is nice
    return nices


def _autogroup_nice(pid: int) -> int | None:
    path = Path(f"/proc/{pid}/autogroup")  # "/autogroup-123 nice 10"
    return int(path.read_text().split()[-1]) if path.exists() else None


@pytest.mark.parametrize("reuse, nice", [("1", "10"), ("0", "10"), ("1", None)],
                         ids=["pool-worker", "fresh-worker", "unset"])
def test_a_training_worker_runs_every_thread_at_the_training_niceness(store, small_mnist, monkeypatch, reuse, nice):
    monkeypatch.setenv("STUDIO_REUSE_WORKERS", reuse)  # 1: started by the pool (start_for); 0: core.cli.worker
    if nice is None:
        monkeypatch.delenv(TRAINING_NICE_ENV, raising=False)
    else:
        monkeypatch.setenv(TRAINING_NICE_ENV, nice)
    asked = int(nice or DEFAULT_NICE)
    expected = asked or os.getpriority(os.PRIO_PROCESS, 0)  # 0: the app's, this process's own
    run_id = launcher.start(store, TrainConfig(network="mlp", hidden=(32,), epochs=500, data_dir=str(small_mnist)))
    try:
        wait_for(lambda: store.get(run_id).step > 3, 120, "the run's first steps (MindSpore's threads started)")
        pid = store.get(run_id).pid
        assert _thread_nices(pid) == {expected}, "every thread of the worker"
        assert _autogroup_nice(pid) in (None, asked), "its session's autogroup"
    finally:
        launcher.stop(store, run_id)
        wait_for(lambda: not store.get(run_id).active, 60, "the run to stop")
        launcher.shutdown(store)


@pytest.mark.parametrize("raw, nice", [("", 0), ("0", 0), ("10", 10), ("19", 19), ("20", 0), ("-5", 0),
                                       ("low", 0)])
def test_the_training_niceness_is_read_from_the_environment_or_said_wrong(monkeypatch, caplog, raw, nice):
    monkeypatch.setenv(TRAINING_NICE_ENV, raw)
    with caplog.at_level(logging.WARNING, logger="core.runs.launch.priority"):
        assert training_nice() == nice
    said = [r.getMessage() for r in caplog.records]
    assert bool(said) == (raw not in ("", "0", "10", "19")), said
    if said:
        assert raw in said[0] and "0 (the app's priority) to 19 (the lowest)" in said[0]
