"""Where and how the msrun ranks of a data-parallel run meet: the cluster spec, the scheduler's port, the
msrun command line and the ranks' logs."""
from __future__ import annotations

import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from core import PROJECT_ROOT
from core.messages import Explained
from core.runs.store import RunStore

__all__ = ["RANK_SCRIPT", "COORDINATOR_ENV", "ClusterError", "ClusterSpec", "free_port", "check_port",
           "msrun_command", "cluster_environment", "rank_log_dir", "rank_log", "log_tail", "last_error"]

RANK_SCRIPT = PROJECT_ROOT / "core" / "runs" / "worker" / "rank.py"
COORDINATOR_ENV = "STUDIO_COORDINATOR_PID"  # ranks stop themselves when their coordinator is gone
ERROR_WORDS = ("Error", "error:", "Exception", "Traceback", "failed")
# MindSpore's cluster nodes wait a random 3-5 s (its default) before they try again to reach the scheduler or to
# gather the ranks' host names; a rank that came up before the scheduler was listening waited that long, and
# a run's ranks met 5-8 s after importing MindSpore instead of 1.5-4 s (docs/performance.md, "Data-parallel
# start and end"). A try is one small message: trying every second costs nothing.
RETRY_INTERVALS = {"MS_RETRY_INTERVAL_LOWER": "1", "MS_RETRY_INTERVAL_UPPER": "1"}


class ClusterError(Explained, RuntimeError):
    """The cluster cannot start (port in use, msrun missing); the message says what to do."""


@dataclass(frozen=True)
class ClusterSpec:
    """Where and how the ranks of one run meet. The defaults put every rank on this host."""
    local_workers: int | None = None   # ranks started on this host (None: all of them)
    master_addr: str = "127.0.0.1"     # the scheduler's host (node 0)
    master_port: int | None = None     # None: a free port on this host (single host only)
    node_rank: int = 0                 # this host's place among the hosts (0 runs the scheduler and rank 0)
    cluster_timeout_s: int = 60        # how long ranks wait for each other before giving up

    def local(self, workers: int) -> int:
        return self.local_workers if self.local_workers is not None else workers

    def errors(self, workers: int) -> dict[str, str]:
        e = {}
        local = self.local(workers)
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
            raise ClusterError("port_in_use", port=port, addr=addr, why=str(e.strerror or e)) from None


def msrun_executable() -> str:
    """The msrun next to this interpreter (the project's virtual environment), else the one on PATH."""
    here = Path(sys.executable).parent / "msrun"
    if here.exists():
        return str(here)
    found = shutil.which("msrun")
    if not found:
        raise ClusterError("msrun_missing")
    return found


def rank_log_dir(store: RunStore, run_id: str) -> Path:
    return store.logs_dir / run_id


def rank_log(logs: Path, rank: int) -> Path:
    return logs / f"worker_{rank}.log"  # msrun's naming


def msrun_command(run_id: str, store: RunStore, workers: int, spec: ClusterSpec, port: int) -> list[str]:
    local = spec.local(workers)
    cmd = [msrun_executable(), f"--worker_num={workers}", f"--local_worker_num={local}",
           f"--master_addr={spec.master_addr}", f"--master_port={port}", "--join=True",
           f"--cluster_time_out={spec.cluster_timeout_s}", f"--log_dir={rank_log_dir(store, run_id)}"]
    if local < workers:
        cmd.append(f"--node_rank={spec.node_rank}")
    return cmd + [str(RANK_SCRIPT), run_id, *store.command_args()]


def cluster_environment(env: dict[str, str]) -> dict[str, str]:
    """msrun's environment (passed on to its scheduler and ranks): env with the cluster's retry intervals,
    unless the user set their own."""
    return {**RETRY_INTERVALS, **env}


def log_tail(log: Path, lines: int = 40, max_bytes: int = 64_000) -> str:
    """The last lines of a log, reading at most its last max_bytes ("" when there is none)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - max_bytes, 0))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def last_error(log: Path, lines: int = 40) -> str:
    """The most telling line of a rank's log: its last error, else a note that it ended silently."""
    for line in reversed(log_tail(log, lines).splitlines()):
        if any(w in line for w in ERROR_WORDS):
            return line.strip()[:300]
    return ("its process ended without an error message (killed by a signal, or out of memory; see "
            f"{log.name})")
