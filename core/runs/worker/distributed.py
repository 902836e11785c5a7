"""Data-parallel training through MindSpore's own launcher, msrun: one run of the store as N rank
processes (on one host, or several with a scheduler address, port and node rank).

The process that calls run_distributed is the run's coordinator (the dashboard's worker process or the
command line): it starts msrun, which starts a scheduler and the ranks (`python core/runs/worker/rank.py ...`).
Every rank trains on its share of the images; rank 0 records the run in the store exactly as a single
process does; each rank keeps its own row (state, step, pid) and log. The coordinator watches them:
a rank that dies ends the whole run as failed, naming it; a stop ends every process.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Iterable

from core import PROJECT_ROOT
from core.runs.worker.cluster import (COORDINATOR_ENV, ClusterError, ClusterSpec, check_port, cluster_environment,
                                     free_port, last_error, msrun_command, rank_log, rank_log_dir)
from core.runs.worker.heartbeat import Heartbeat
from core.runs.processes import kill_tree, pid_alive
from core.runs.rows import RankRow, Run
from core.runs.store import RunStore
from core.messages import Message
from core.runtime import child_environment
from core.training.events import Callback, CallbackList

__all__ = ["run_distributed", "ranks_done"]

WATCH_EVERY_S = 0.5
# After rank 0 finished the run, how long msrun may take to wind the cluster down when ranks of other hosts may
# still be leaving it. With every rank on this host, msrun ends as soon as they have all exited: its scheduler
# looks for leavers every 5 s, and msrun for ended ranks every second (ranks_done).
ENDED_GRACE_S = 5.0
DONE_STATES = ("completed", "early_stopped")


def run_distributed(store: RunStore, run_id: str, spec: ClusterSpec | None = None,
                    callbacks: Iterable[Callback] = ()) -> str:
    """Coordinate one run as config.workers msrun ranks until it ends; returns its final status."""
    spec = spec or ClusterSpec()
    run = store.existing(run_id)
    cmd, port = _msrun_or_fail(store, run, spec)
    logs = rank_log_dir(store, run_id)
    proc = _launch(store, run, spec, cmd, port, logs)
    host = socket.gethostname()
    with Heartbeat(store, run_id):  # the coordinator keeps the run alive too (start-up, graph compilation)
        try:
            code = _watch(store, run, proc, logs, host, CallbackList(callbacks))
            _judge_end(store, run_id, code, logs, is_master=spec.node_rank == 0)
        except KeyboardInterrupt:  # Ctrl-C or a forced stop of the coordinator: end every rank too
            return _end_all(store, run_id, proc, host)
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
    return store.existing(run_id).status


def _msrun_or_fail(store: RunStore, run: Run, spec: ClusterSpec) -> tuple[list[str], int]:
    """The msrun command and the scheduler's port; a spec or port that cannot work fails the run."""
    problems = spec.errors(run.config.workers)
    if problems:
        message = "; ".join(f"{k}: {v}" for k, v in problems.items())
        error = ClusterError("cluster_spec", problems=message)
        store.finish(run.id, "failed", error.said)
        raise error
    try:
        port = spec.master_port or free_port(spec.master_addr)
        if spec.node_rank == 0:
            check_port(spec.master_addr, port)
        return msrun_command(run.id, store, run.config.workers, spec, port), port
    except ClusterError as e:
        store.finish(run.id, "failed", e.said)
        store.log(run.id, f"failed: {e}")
        raise


def _launch(store: RunStore, run: Run, spec: ClusterSpec, cmd: list[str], port: int, logs: Path):
    """Mark the run running under this coordinator and start msrun (its output in <logs>/msrun.log)."""
    config = run.config
    logs.mkdir(parents=True, exist_ok=True)
    store.clear_ranks(run.id)
    store.update(run.id, status="running", pid=os.getpid(), heartbeat=time.time(), phase="starting workers",
                 started=run.started or time.time())
    store.log(run.id, f"starting {config.workers} data-parallel workers with msrun (scheduler "
                      f"{spec.master_addr}:{port}; global batch {config.batch_size} = {config.workers} × "
                      f"{config.worker_batch}); worker logs in {logs}")
    env = cluster_environment(child_environment(
        PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **{COORDINATOR_ENV: str(os.getpid())}, **store.command_env()))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # msrun starts `python`
    with open(logs / "msrun.log", "ab") as out:
        return subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _watch(store: RunStore, run: Run, proc, logs: Path, host: str, events: CallbackList) -> int:
    """Until msrun ends: pass new epochs on to the callbacks, end msrun once rank 0 has finished the run,
    and end everything when a rank dies. Returns msrun's exit code."""
    run_id, printed, ended_at = run.id, 0, None
    while proc.poll() is None:
        time.sleep(WATCH_EVERY_S)
        current = store.get(run_id)
        if current is None or not current.active:  # rank 0 has finished the run (or it was deleted)
            ended_at = ended_at or time.monotonic()
            rows = store.ranks(run_id)
            if ranks_done(rows, run.config.workers, host) or time.monotonic() - ended_at > ENDED_GRACE_S:
                kill_tree(proc.pid, _local_pids(rows, host))  # msrun and its scheduler
                break
        if events.callbacks:
            epochs = store.epochs(run_id)
            for e in epochs[printed:]:
                events.emit(e)
            printed = len(epochs)
        if handle_dead_rank(store, run_id, proc, logs, host):
            break
    code = proc.wait()
    handle_dead_rank(store, run_id, proc, logs, host)  # msrun may have noticed first and ended
    return code


def _judge_end(store: RunStore, run_id: str, code: int, logs: Path, is_master: bool) -> None:
    """msrun has ended: a run still active then ended with its ranks (another host's view) or failed."""
    current = store.get(run_id)
    if current is None or not current.active:
        return
    ranks = store.ranks(run_id)
    states = {r.state for r in ranks}
    if not is_master and len(states) == 1 and states <= {"completed", "early_stopped", "stopped"}:
        # Judged by the ranks, not msrun's exit code: when host 0 is this very machine (a loopback
        # rehearsal), msrun also tries, and fails, to start a second scheduler here.
        state = states.pop()
        store.finish(run_id, state, Message("host_ranks_ended", {"status": state}))
        return
    why = "; ".join(f"rank {r.rank}: {last_error(rank_log(logs, r.rank))}" for r in ranks
                    if r.state not in DONE_STATES)
    _fail(store, run_id, Message("ranks_ended_early", {"code": code, "why": why or last_error(logs / "msrun.log")}))


def _end_all(store: RunStore, run_id: str, proc, host: str) -> str:
    """The coordinator was interrupted: end msrun and this host's ranks, and record the run as stopped."""
    kill_tree(proc.pid, _local_pids(store.ranks(run_id), host))
    for r in store.ranks(run_id):
        if r.alive_state:
            store.set_rank(run_id, r.rank, state="stopped", message=Message("rank_ended_with_coordinator"))
    store.end_if_active(run_id, "stopped", Message("coordinator_interrupted"))
    return "stopped"


def ranks_done(rows: list[RankRow], workers: int, host: str) -> bool:
    """Whether every rank of the run is of this host, has recorded its end and has exited: then msrun and its
    scheduler have nothing left to wait for. A rank of another host may still be leaving the cluster."""
    return len(rows) == workers and all(r.host == host and not r.alive_state and not pid_alive(r.pid) for r in rows)


def _local_pids(rows: list[RankRow], host: str) -> list[int]:
    """The pids of the ranks that run on this host (kill_tree ends them with msrun)."""
    return [r.pid for r in rows if r.host == host and r.pid]


def _first_failed_pid(logs: Path) -> int | None:
    """The rank msrun saw fail first ("Worker process P exit with exception"), if it logged one."""
    try:
        m = re.search(r"Worker process (\d+) exit with exception", (logs / "msrun.log").read_text(errors="replace"))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def handle_dead_rank(store: RunStore, run_id: str, proc, logs: Path, host: str) -> bool:
    """If a rank of this host died without reporting (killed, crashed), end the others and fail the run
    naming it. msrun, which kills the survivors itself, may get there first: the rank it saw fail first
    is the one named. Returns whether a dead rank was found."""
    rows = store.ranks(run_id)
    dead = [r for r in rows if r.alive_state and r.host == host and r.pid and not pid_alive(r.pid)]
    if not dead:
        return False
    reported = [r for r in rows if r.state == "failed"]
    if reported:  # a rank failed with its own error (rank 0 also records it); the dead ones were collateral
        kill_tree(proc.pid, _local_pids(rows, host))
        _fail_reported(store, run_id, reported[0], dead)
        return True
    first = _first_failed_pid(logs)
    died = next((d for d in dead if d.pid == first), dead[0])
    why = last_error(rank_log(logs, died.rank))
    store.set_rank(run_id, died.rank, state="died", message=why)
    kill_tree(proc.pid, _local_pids(rows, host))
    _fail_died(store, run_id, died, why)
    return True


def _ended_in_its_wake(run) -> bool:
    """Whether rank 0 ended the run because of another rank's end: it failed, or msrun, having seen a rank die
    before this watcher did, stopped it with a signal (recorded as stopped, which the run was not)."""
    return run.status == "failed" or (run.status == "stopped" and run.said is not None
                                      and run.said.key == "interrupted_by_signal")


def _fail_reported(store: RunStore, run_id: str, failed, dead: list) -> None:
    for d in dead:
        store.set_rank(run_id, d.rank, state="stopped", message=Message("rank_ended_failed", {"rank": failed.rank}))
    current = store.get(run_id)
    if current is not None and (current.active or _ended_in_its_wake(current)):
        _fail(store, run_id, Message("rank_failed", {"rank": failed.rank, "why": failed.said or failed.message}))


def _fail_died(store: RunStore, run_id: str, died, why: str) -> None:
    for other in store.ranks(run_id):
        if other.alive_state:
            store.set_rank(run_id, other.rank, state="stopped", message=Message("rank_ended_died", {"rank": died.rank}))
    message = Message("rank_died", {"rank": died.rank, "pid": died.pid, "why": why})
    current = store.get(run_id)
    if current is not None and _ended_in_its_wake(current) and current.message:  # rank 0 ended in its wake
        message = Message("rank_died_then", {"what": message, "then": current.said or current.message})
    if current is not None and (current.active or _ended_in_its_wake(current)):
        _fail(store, run_id, message)


def _fail(store: RunStore, run_id: str, message: str | Message) -> None:
    store.log(run_id, f"failed: {message}")
    store.finish(run_id, "failed", message)
