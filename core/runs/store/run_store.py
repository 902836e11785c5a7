"""The run store: the single source of truth for runs — a database (SQLite in the store's folder by default, or
the team's PostgreSQL through STUDIO_DATABASE_URL / --database-url) plus a folder for checkpoints and logs.

Workers write status, metrics, logs and checkpoints; pages read it and write requests (pause/resume/stop).
Every query of the studio is a method here or in the mixins beside it (metrics, queue, team records): no other
module opens a connection. No MindSpore import here: the app reads the store without touching MindSpore.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import time
import unicodedata
from pathlib import Path

from sqlalchemy import delete, func, insert, select, update

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.messages import Explained, ExplainedValueError, Message
from core.runs.ids import check_run_id, new_run_id
from core.runs.processes import pid_alive
from core.runs.rows import ACTIVE, FINISHED, RESUMABLE, Run
from core.runs.store.migrate import current_revision
from core.runs.store.migrate import upgrade as migrate_to_head
from core.runs.store.artifacts import Artifacts
from core.runs.store.class_records import ClassRecords
from core.runs.store.convert import to_run
from core.runs.store.database import (DATABASE_URL_ENV, WORKER_PATIENCE_S, Database, database_url_setting,
                                     dispose, memory_url, outlasting_disconnects, shown_url, sqlite_url)
from core.runs.store.live_requests import LiveRequests
from core.runs.store.metric_records import MetricRecords
from core.runs.store.queue_records import QueueRecords
from core.runs.store.run_records import RunRecords
from core.runs.store.server_settings import ServerSettings
from core.runs.store.schema import RUN_TABLES, epochs, layer_stats, runs, setting_changes, steps, validations
from core.runs.store.team_records import TeamRecords

__all__ = ["DATA_DIR_ENV", "RunBusy", "RunGone", "StoreError", "RunStore", "default_data_dir"]

DATA_DIR_ENV = "STUDIO_DATA_DIR"
# for runs that bypass the queue (several hosts): one at a time; others queue (core/runs/run_queue.py)
MAX_ACTIVE_RUNS = 1
HEARTBEAT_STALE_S = 60.0
HOST = socket.gethostname()
MAX_RUN_NAME = 80


class StoreError(Explained, OSError):
    """The run store's folder cannot be used; the message says what to set."""


class RunGone(Explained, LookupError):
    """A run that had to be in the store is not (deleted meanwhile)."""


class RunBusy(Explained, RuntimeError):
    """Another run is training; the message names it."""


def checked_run_name(name: str) -> str:
    """A run's name as kept: 1 to 80 characters, no control characters (newlines, ANSI escapes), on every path
    (pages, command lines, sweeps, uploads); ExplainedValueError otherwise."""
    name = name.strip()
    if not name or len(name) > MAX_RUN_NAME or any(unicodedata.category(c).startswith("C") for c in name):
        raise ExplainedValueError("bad_run_name", most=MAX_RUN_NAME)
    return name


def _on_a_read_only_mount(folder: Path) -> bool:
    """The store's folder exists on a file system mounted read-only (a backup, a shared snapshot)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False  # not there yet: it is made


def default_data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or PROJECT_ROOT / "runs").expanduser().resolve()


def _ended(status: str, message: str | Message) -> dict:
    """The columns of a run that ends (finish, end_if_active)."""
    assert status in FINISHED, status
    said = message.to_json() if isinstance(message, Message) else None
    return dict(status=status, message=str(message), said=said, finished=time.time(), phase="")


@outlasting_disconnects
class RunStore(MetricRecords, LiveRequests, QueueRecords, TeamRecords, ClassRecords, RunRecords, Artifacts,
               ServerSettings):
    """root: the store's folder (checkpoints, logs; the SQLite file when no database URL is given).
    database_url: the database (default: $STUDIO_DATABASE_URL, else root/runs.sqlite). upgrade_schema: migrate a
    shared database that holds an older schema (core.runs.store.migrate; a person's explicit upgrade)."""

    def __init__(self, root: str | os.PathLike | None = None, database_url: str | None = None,
                 upgrade_schema: bool = False):
        self.root = Path(root).expanduser().resolve() if root else default_data_dir()
        self.checkpoints = self.root / "checkpoints"
        self.logs_dir = self.root / "logs"
        self.read_only = _on_a_read_only_mount(self.root)  # still read, and exported; nothing written
        try:
            if not self.read_only:
                self.checkpoints.mkdir(parents=True, exist_ok=True)
                self.logs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError("store_unusable", root=self.root, why=str(e.strerror or e), env=DATA_DIR_ENV) from None
        self.url = (database_url or database_url_setting()
                    or sqlite_url(self.root / "runs.sqlite", read_only=self.read_only))
        self.db = Database(self.url, lock_dir=self.root)
        self.db_path = self.db.file  # SQLite's file (None for a server)
        migrate_to_head(self.db, explicit=upgrade_schema)
        self.db.remember_file()

    @classmethod
    def in_memory(cls, root: str | os.PathLike) -> RunStore:
        """A store whose database lives in this process's memory (files still under root): the fast store of
        tests that start no training process, as Optuna's InMemoryStorage. It lasts until close()."""
        return cls(root, memory_url(new_run_id()))

    def close(self) -> None:
        """Let go of the database's pooled connections (an in-memory database: the database itself)."""
        dispose(self.url)

    @property
    def shares_database(self) -> bool:
        """Whether every host opens this store's database (a server), not only this host (a SQLite file)."""
        return self.db.is_server

    @property
    def key(self) -> str:
        """What names this store among others in one process (its database)."""
        return self.url

    @property
    def schema_revision(self) -> str | None:
        """The Alembic revision of this store's database schema."""
        return current_revision(self.db)

    @property
    def where(self) -> str:
        """Where the runs are, for people: the SQLite file, or the database URL without its password."""
        return str(self.db_path) if self.db_path else shown_url(self.url)

    def command_args(self) -> list[str]:
        """The arguments a child process (core.cli.worker, core.cli.warm_worker, a rank) opens this same store with,
        with command_env() in its environment. No database URL here: a command line is readable by every local
        user (/proc/PID/cmdline), and a team database's URL carries its password."""
        self._no_child_of_memory()
        return ["--store", str(self.root)]

    def command_env(self) -> dict[str, str]:
        """What a child's environment (readable by its own user only) adds to command_args: this store's database,
        always, whatever the parent's environment says."""
        self._no_child_of_memory()
        return {DATABASE_URL_ENV: self.url}

    def _no_child_of_memory(self) -> None:
        if self.db.in_memory:
            raise RuntimeError(f"a child process cannot open the in-memory store {self.url}: use a store on disk")

    def ride_out_outages(self, seconds: float = WORKER_PATIENCE_S) -> None:
        """Wait up to `seconds` for the database whenever it cannot be reached (a training process: a database
        restart pauses its run instead of ending it), instead of failing at once (a page: it says so)."""
        self.db.patience_s = seconds

    def optuna_storage(self):
        """The sweeps' Optuna studies, in this store's database (Optuna's RDB storage)."""
        return self.db.optuna_storage()

    def exclusive(self, name: str):
        """A context in which this process alone, of all that open this store on any host, holds `name`."""
        return self.db.held(name)

    # --- runs -------------------------------------------------------------------------------------------
    def create_run(self, config: TrainConfig, name: str | None = None, source: str = "dashboard",
                   status: str = "starting", exclusive: bool = True, most_queued: int | None = None, **extra) -> str:
        """Insert a run (extra: more of its columns, written in the same insert). With exclusive, refuse
        (RunBusy) while another run is active; with most_queued, refuse (ExplainedValueError) when its submitter
        already has that many queued: each check and the insert are one transaction, so two simultaneous Starts
        cannot both win."""
        config.validate()
        if name is not None:
            name = checked_run_name(name)
        run_id = new_run_id()
        self.reconcile()
        with self.db.write(lock="runs") as conn:
            if exclusive:
                busy = conn.execute(select(runs.c.name).where(runs.c.status.in_(ACTIVE))).scalars().all()
                if len(busy) >= MAX_ACTIVE_RUNS:
                    raise RunBusy("run_busy_start", name=busy[0])
            if most_queued is not None:
                waiting = conn.execute(select(func.count()).select_from(runs).where(
                    runs.c.status == "queued", runs.c.submitter == extra.get("submitter", ""))).scalar_one()
                if waiting >= most_queued:
                    raise ExplainedValueError("queue_full_for_person", n=waiting, env="STUDIO_MAX_QUEUED_PER_PERSON")
            conn.execute(insert(runs).values(id=run_id, name=name or f"{config.network}-{run_id[9:15]}", source=source,
                                             config=config.to_json(), status=status, created=time.time(),
                                             **{"total_steps": 0, **extra}))
        return run_id

    def get(self, run_id: str) -> Run | None:
        with self.db.read() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
        return to_run(row) if row else None

    def existing(self, run_id: str) -> Run:
        """The run, which must be in the store (RunGone when it was deleted meanwhile)."""
        run = self.get(run_id)
        if run is None:
            raise RunGone("run_gone")
        return run

    def list_runs(self) -> list[Run]:
        with self.db.read() as conn:
            rows = conn.execute(select(runs).order_by(runs.c.created.desc())).mappings().all()
        return [to_run(r) for r in rows]

    def active_run(self) -> Run | None:
        self.reconcile()
        with self.db.read() as conn:
            row = conn.execute(select(runs).where(runs.c.status.in_(ACTIVE)).order_by(runs.c.created.desc())
                               .limit(1)).mappings().first()
        return to_run(row) if row else None

    def update(self, run_id: str, **fields) -> None:
        if not fields:
            return
        if fields.get("pid") is not None:
            fields.setdefault("host", HOST)  # a pid means something only on its own host (reconcile)
        with self.db.write() as conn:
            conn.execute(update(runs).where(runs.c.id == run_id).values(**fields))

    def finish(self, run_id: str, status: str, message: str | Message = "") -> None:
        """End a run. A Message is kept with its catalogue key too, so pages can say it in their language."""
        self.update(run_id, **_ended(status, message))

    def end_if_active(self, run_id: str, status: str, message: Message) -> bool:
        """End a run only while it is still active, in one statement; True when this call ended it. A check
        here ("is it active?") and a separate finish would overwrite an end the worker itself wrote between the
        two: a Stop recorded as stopped, then marked interrupted because the stopped worker had just exited."""
        with self.db.write() as conn:
            ended = conn.execute(update(runs).where(runs.c.id == run_id, runs.c.status.in_(ACTIVE)).values(
                **_ended(status, message))).rowcount
        return ended == 1

    def rename(self, run_id: str, name: str) -> None:
        self.update(run_id, name=checked_run_name(name))

    def annotate(self, run_id: str, tags: tuple[str, ...], notes: str) -> None:
        """Set a run's tags and note (checked: core/runs/people/annotations.py)."""
        self.update(run_id, tags=json.dumps(list(tags), ensure_ascii=False), notes=notes)

    def delete(self, run_id: str) -> None:
        check_run_id(run_id)  # before anything is touched: a row with a path for an id (a tampered store) too
        run = self.get(run_id)
        if run is None:
            return
        if run.active:
            raise RunBusy("delete_active", name=run.name, status=run.status)
        with self.db.write() as conn:
            for table in RUN_TABLES:
                conn.execute(delete(table).where(table.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))
        shutil.rmtree(self.checkpoint_path(run_id).parent, ignore_errors=True)
        shutil.rmtree(self.export_dir(run_id), ignore_errors=True)
        self.log_path(run_id).unlink(missing_ok=True)
        data = Path(run.config.data_dir) if run.config.data_dir else None
        if data is not None and data.parent == self.root / "finetune":  # a fine-tune's own data (people/finetune.py)
            shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(self.logs_dir / run_id, ignore_errors=True)  # data-parallel ranks' logs

    def checkpoint_path(self, run_id: str) -> Path:
        return self.checkpoints / check_run_id(run_id) / "model.ckpt"

    def best_checkpoint_path(self, run_id: str) -> Path:
        """Early stopping: the best epoch's weights, which a resumed run restores at its end."""
        return self.checkpoints / check_run_id(run_id) / "best.ckpt"

    def export_dir(self, run_id: str) -> Path:
        return self.root / "exports" / check_run_id(run_id)

    def log_path(self, run_id: str) -> Path:
        """The worker's own stdout/stderr (tracebacks a crash leaves before it can reach the database)."""
        return self.logs_dir / f"{check_run_id(run_id)}.log"

    def resumable(self, run: Run) -> Message | None:
        """Why this run cannot be resumed, or None when it can."""
        if run.external:
            return Message("not_resumable_external")
        if run.status not in RESUMABLE:
            return Message("not_resumable_diverged" if run.status == "diverged" else "not_resumable",
                           {"status": run.status})
        if not self.has_file(run.id):
            return Message("no_checkpoint_to_resume")
        return None

    def prepare_resume(self, run_id: str, waiter_pid: int | None = None) -> Run:
        """Queue a stopped, failed or interrupted run with a checkpoint again (ValueError when it cannot be
        resumed). The worker the queue starts for it continues from its checkpoint."""
        check_run_id(run_id)
        self.reconcile()
        with self.db.write(lock="runs") as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
            if row is None:
                raise ExplainedValueError("run_gone")
            run = to_run(row)
            why = self.resumable(run)
            if why:
                raise ExplainedValueError(f"resume_refused_{why.key}", name=run.name, **why.values)
            now = time.time()
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                status="queued", request="run", message="", said=None, finished=None, pid=None, heartbeat=now,
                phase="resuming", queue_order=now, waiter_pid=waiter_pid))
        self.log(run_id, f"resume requested (was {run.status})")
        return self.existing(run_id)

    def truncate_after(self, run_id: str, epoch: int) -> int:
        """Forget metrics recorded after epoch (an unfinished epoch before a resume); returns the number of
        step rows dropped."""
        with self.db.write() as conn:
            dropped = conn.execute(delete(steps).where(steps.c.run_id == run_id, steps.c.epoch > epoch)).rowcount
            for table in (epochs, layer_stats, validations):
                conn.execute(delete(table).where(table.c.run_id == run_id, table.c.epoch > epoch))
            last = conn.execute(select(func.max(steps.c.step)).where(steps.c.run_id == run_id)).scalar() or 0
            changes = setting_changes.c
            conn.execute(delete(setting_changes).where(changes.run_id == run_id, changes.step > last))
            conn.execute(update(runs).where(runs.c.id == run_id).values(epoch=epoch, step=last))
        return dropped

    # --- truth after crashes -----------------------------------------------------------------------------
    def reconcile(self) -> list[str]:
        """Mark active runs whose worker is gone (or silent for long) as interrupted. Returns their ids.
        A pid is only asked about on its own host: a run trained elsewhere is judged by its heartbeat."""
        now, dead = time.time(), []
        with self.db.read() as conn:
            rows = conn.execute(select(runs.c.id, runs.c.pid, runs.c.host, runs.c.heartbeat, runs.c.created,
                                       runs.c.executor).where(runs.c.status.in_(ACTIVE))).all()
        back = self.db.recovered_at or 0.0  # nobody could write a heartbeat while the database was unreachable
        for run_id, pid, host, heartbeat, created, executor in rows:
            last = max(heartbeat or created, back)
            gone = now - last > HEARTBEAT_STALE_S  # a worker that never reported in, or one that hangs
            if pid is not None and not executor and host in (None, HOST):
                gone = gone or not pid_alive(pid)
            if gone and self.end_if_active(run_id, "interrupted", Message("worker_gone")):
                self.log(run_id, "marked interrupted: its worker process is gone")
                dead.append(run_id)
        return dead

