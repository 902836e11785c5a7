"""Data-parallel training through MindSpore's own launcher, msrun: one run of the store as N worker
processes (on one host, or several with a scheduler address, port and node rank).

The process that calls run_distributed is the run's coordinator (the dashboard's worker process or the
command line): it starts msrun, which starts a scheduler and the workers (`python core/rank.py ...`).
Every worker trains on its share of the images; rank 0 records the run in the store exactly as a single
process does; each worker keeps its own row (state, step, pid) and log. The coordinator watches them:
a worker that dies ends the whole run as failed, naming the rank; a stop ends every process.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.data_source import PROJECT_ROOT
from core.execute import keep_heartbeat
from core.runtime import child_environment
from core.store import RunStore, pid_alive

RANK_SCRIPT = PROJECT_ROOT / "core" / "rank.py"
COORDINATOR_ENV = "STUDIO_COORDINATOR_PID"  # workers stop themselves when their coordinator is gone
WATCH_EVERY_S = 0.5
KILL_GRACE_S = 2.0
ENDED_GRACE_S = 5.0  # after rank 0 finished the run, how long msrun may take to wind the cluster down
ALIVE_STATES = ("starting", "training")


class ClusterError(RuntimeError):
    """The cluster cannot start (port in use, msrun missing); the message says what to do."""


@dataclass(frozen=True)
class ClusterSpec:
    """Where and how the workers of one run meet. The defaults put every worker on this host."""
    local_workers: int | None = None   # workers started on this host (None: all of them)
    master_addr: str = "127.0.0.1"     # the scheduler's host (node 0)
    master_port: int | None = None     # None: a free port on this host (single host only)
    node_rank: int = 0                 # this host's place among the hosts (0 runs the scheduler and rank 0)
    cluster_timeout_s: int = 60        # how long workers wait for each other before giving up

    def errors(self, workers: int) -> dict[str, str]:
        e = {}
        local = self.local_workers if self.local_workers is not None else workers
        if not 1 <= local <= workers:
            e["local_workers"] = f"must be between 1 and the {workers} workers, got {local}"
        if self.master_port is not None and not 1024 <= self.master_port <= 65535:
            e["master_port"] = f"must be a port between 1024 and 65535, got {self.master_port}"
        if self.node_rank < 0:
            e["node_rank"] = f"must be 0 or more, got {self.node_rank}"
        if local < workers and self.master_port is None:
            e["master_port"] = "several hosts must agree on the scheduler's port: set it on every host"
        if self.cluster_timeout_s < 5:
            e["cluster_timeout"] = f"must be at least 5 seconds, got {self.cluster_timeout_s}"
        return e


def free_port(addr: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def check_port(addr: str, port: int) -> None:
    """ClusterError when the scheduler's port cannot be bound on this host."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((addr, port))
        except OSError as e:
            raise ClusterError(f"port {port} on {addr} is already in use ({e.strerror}): another program or "
                               f"distributed run holds it. Choose another scheduler port (--master-port) or "
                               "leave it unset to pick a free one.") from None


def msrun_executable() -> str:
    """The msrun next to this interpreter (the project's virtual environment), else the one on PATH."""
    here = Path(sys.executable).parent / "msrun"
    if here.exists():
        return str(here)
    import shutil
    found = shutil.which("msrun")
    if not found:
        raise ClusterError("msrun (MindSpore's launcher) was not found: install mindspore in this environment.")
    return found


def worker_log_dir(store: RunStore, run_id: str) -> Path:
    return store.logs_dir / run_id


def msrun_command(run_id: str, store: RunStore, workers: int, spec: ClusterSpec, port: int) -> list[str]:
    local = spec.local_workers if spec.local_workers is not None else workers
    cmd = [msrun_executable(), f"--worker_num={workers}", f"--local_worker_num={local}",
           f"--master_addr={spec.master_addr}", f"--master_port={port}", "--join=True",
           f"--cluster_time_out={spec.cluster_timeout_s}", f"--log_dir={worker_log_dir(store, run_id)}"]
    if local < workers:
        cmd.append(f"--node_rank={spec.node_rank}")
    return cmd + [str(RANK_SCRIPT), run_id, "--store", str(store.root)]


def process_tree(root_pid: int) -> list[int]:
    """root_pid and all its descendants (from /proc), parents first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def kill_tree(root_pid: int, extra: list[int] = ()) -> None:
    """End msrun, its scheduler and workers (they run in process groups of their own): SIGTERM, then
    SIGKILL what is left after KILL_GRACE_S."""
    pids = [p for p in dict.fromkeys([*process_tree(root_pid), *extra]) if p and p != os.getpid()]
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 1.0)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.1)
        pids = [p for p in pids if pid_alive(p)]
        if not pids:
            return


def rank_log(logs: Path, rank: int) -> Path:
    return logs / f"worker_{rank}.log"  # msrun's naming


def log_tail(log: Path, lines: int = 40, max_bytes: int = 64_000) -> str:
    """The last lines of a log, reading at most its last max_bytes ("" when there is none)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - max_bytes, 0))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _last_error(log: Path, lines: int = 40) -> str:
    """The most telling line of a worker's log: its last error, else a note that it ended silently."""
    tail = log_tail(log, lines).splitlines()
    for line in reversed(tail):
        if any(w in line for w in ("Error", "error:", "Exception", "Traceback", "failed")):
            return line.strip()[:300]
    return ("its process ended without an error message (killed by a signal, or out of memory; see "
            f"{log.name})")


def run_distributed(store: RunStore, run_id: str, spec: ClusterSpec | None = None,
                    echo: Callable[[dict], None] | None = None) -> str:
    """Coordinate one run as config.workers msrun workers until it ends; returns its final status."""
    spec = spec or ClusterSpec()
    run = store.get(run_id)
    config = run.config
    problems = spec.errors(config.workers)
    if problems:
        message = "; ".join(f"{k}: {v}" for k, v in problems.items())
        store.finish(run_id, "failed", message)
        raise ClusterError(message)
    is_master = spec.node_rank == 0
    try:
        port = spec.master_port or free_port(spec.master_addr)
        if is_master:
            check_port(spec.master_addr, port)
        cmd = msrun_command(run_id, store, config.workers, spec, port)
    except ClusterError as e:
        store.finish(run_id, "failed", str(e))
        store.log(run_id, f"failed: {e}")
        raise
    logs = worker_log_dir(store, run_id)
    logs.mkdir(parents=True, exist_ok=True)
    store.clear_workers(run_id)
    store.update(run_id, status="running", pid=os.getpid(), heartbeat=time.time(), phase="starting workers",
                 started=run.started or time.time())
    store.log(run_id, f"starting {config.workers} data-parallel workers with msrun (scheduler "
                      f"{spec.master_addr}:{port}; global batch {config.batch_size} = {config.workers} × "
                      f"{config.worker_batch}); worker logs in {logs}")
    env = child_environment(PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                            **{COORDINATOR_ENV: str(os.getpid())})
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # msrun starts `python`
    with open(logs / "msrun.log", "ab") as out:
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    done = threading.Event()  # the coordinator keeps the run alive too (start-up, graph compilation)
    threading.Thread(target=keep_heartbeat, args=(store, run_id, done), daemon=True).start()
    printed = 0
    host = socket.gethostname()
    ended_at = None
    try:
        while proc.poll() is None:
            time.sleep(WATCH_EVERY_S)
            current = store.get(run_id)
            if current is None or not current.active:  # rank 0 has finished the run (or it was deleted)
                ended_at = ended_at or time.monotonic()
                if time.monotonic() - ended_at > ENDED_GRACE_S:  # msrun and its scheduler linger: end them
                    kill_tree(proc.pid, [w["pid"] for w in store.workers(run_id) if w["host"] == host])
                    break
            if echo is not None:
                epochs = store.epochs(run_id)
                for e in epochs[printed:]:
                    echo({"kind": "epoch", **e})
                printed = len(epochs)
            if _handle_dead_worker(store, run_id, proc, logs, host):
                break
        code = proc.wait()
        _handle_dead_worker(store, run_id, proc, logs, host)  # msrun may have noticed first and ended
        current = store.get(run_id)
        states = {w["state"] for w in store.workers(run_id)}
        if current is not None and current.active and not is_master and len(states) == 1 \
                and states <= {"completed", "early_stopped", "stopped"}:
            # Judged by the workers, not msrun's exit code: when host 0 is this very machine (a loopback
            # rehearsal), msrun also tries, and fails, to start a second scheduler here.
            state = states.pop()
            store.finish(run_id, state, f"this host's workers ended ({state}); host 0 (node rank 0) records the "
                                        "run's metrics and checkpoints")
        elif current is not None and current.active:
            why = "; ".join(f"rank {w['rank']}: {_last_error(rank_log(logs, w['rank']))}"
                            for w in store.workers(run_id) if w["state"] not in ("completed", "early_stopped"))
            _fail(store, run_id, f"the workers ended (msrun exit code {code}) before the run finished: "
                                 f"{why or _last_error(logs / 'msrun.log')}")
    except KeyboardInterrupt:  # Ctrl-C or a forced stop of the coordinator: end every worker too
        kill_tree(proc.pid, [w["pid"] for w in store.workers(run_id) if w["host"] == host and w["pid"]])
        for w in store.workers(run_id):
            if w["state"] in ALIVE_STATES:
                store.set_worker(run_id, w["rank"], state="stopped", message="ended with the coordinator")
        current = store.get(run_id)
        if current is not None and current.active:
            store.finish(run_id, "stopped", "stopped: the coordinating process was interrupted; every worker "
                                            "was ended")
        return "stopped"
    finally:
        done.set()
        if proc.poll() is None:
            kill_tree(proc.pid)
    return store.get(run_id).status


def _first_failed_pid(logs: Path) -> int | None:
    """The worker msrun saw fail first ("Worker process P exit with exception"), if it logged one."""
    import re
    try:
        m = re.search(r"Worker process (\d+) exit with exception", (logs / "msrun.log").read_text(errors="replace"))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def _handle_dead_worker(store: RunStore, run_id: str, proc, logs: Path, host: str) -> bool:
    """If a worker of this host died without reporting (killed, crashed), end the others and fail the run
    naming it. msrun, which kills the survivors itself, may get there first: the worker it saw fail first
    is the one named. Returns whether a dead worker was found."""
    rows = store.workers(run_id)
    dead = [w for w in rows if w["state"] in ALIVE_STATES and w["host"] == host and w["pid"]
            and not pid_alive(w["pid"])]
    if not dead:
        return False
    reported = [w for w in rows if w["state"] == "failed"]
    if reported:  # a worker failed with its own error (rank 0 also records it); the dead ones were collateral
        kill_tree(proc.pid, [x["pid"] for x in rows if x["host"] == host and x["pid"]])
        r = reported[0]
        for d in dead:
            store.set_worker(run_id, d["rank"], state="stopped", message=f"ended because rank {r['rank']} failed")
        current = store.get(run_id)
        if current is not None and current.active:
            _fail(store, run_id, f"worker rank {r['rank']} failed: {r['message']}")
        return True
    first = _first_failed_pid(logs)
    w = next((d for d in dead if d["pid"] == first), dead[0])
    why = _last_error(rank_log(logs, w["rank"]))
    store.set_worker(run_id, w["rank"], state="died", message=why)
    kill_tree(proc.pid, [x["pid"] for x in rows if x["host"] == host and x["pid"]])
    for other in store.workers(run_id):
        if other["state"] in ALIVE_STATES:
            store.set_worker(run_id, other["rank"], state="stopped", message=f"ended because rank {w['rank']} died")
    message = (f"worker rank {w['rank']} (pid {w['pid']}) ended unexpectedly: {why}. The other workers were "
               "stopped; resume the run from its last checkpoint.")
    current = store.get(run_id)
    if current is not None and current.status == "failed" and current.message:  # rank 0 failed in its wake
        message += f" (rank 0 then reported: {current.message})"
    if current is not None and (current.active or current.status == "failed"):
        _fail(store, run_id, message)
    return True


def _fail(store: RunStore, run_id: str, message: str) -> None:
    store.log(run_id, f"failed: {message}")
    store.finish(run_id, "failed", message)
