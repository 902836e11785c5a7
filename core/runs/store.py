"""The run store: one SQLite database (WAL) plus a checkpoint folder; the single source of truth for runs.

Every table is created here, once, when a store is opened (runs and their records; the queue's dispatcher lease,
sweeps, drawings, people and the history of actions), so that no module re-creates its own on every call.

Workers write status, metrics, logs and checkpoints; pages read it and write requests (pause/resume/stop).
No MindSpore import here: the app reads the store without touching MindSpore.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.messages import Explained, ExplainedValueError, Message
from core.runs.ids import check_run_id, new_run_id
from core.runs.processes import pid_alive
from core.runs.rows import ACTIVE, FINISHED, RESUMABLE, LogLine, RankRow, RequestNotice, Run, StepRow
from core.training.control import MAX_STEP_DELAY_S
from core.training.events import EpochMetrics, LearningRateEvent, ValidationEvent
from core.training.layer_stats import LayerStat

__all__ = ["DATA_DIR_ENV", "RunBusy", "StoreError", "RunStore", "default_data_dir"]

DATA_DIR_ENV = "STUDIO_DATA_DIR"
MAX_ACTIVE_RUNS = 1  # for runs that bypass the queue (several hosts): one at a time; others queue (core/runs/run_queue.py)
HEARTBEAT_STALE_S = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, source TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL, message TEXT NOT NULL DEFAULT '', request TEXT NOT NULL DEFAULT 'run',
    created REAL NOT NULL, started REAL, finished REAL, heartbeat REAL, pid INTEGER,
    phase TEXT NOT NULL DEFAULT '', step INTEGER NOT NULL DEFAULT 0, total_steps INTEGER NOT NULL DEFAULT 0,
    epoch INTEGER NOT NULL DEFAULT 0, samples_per_s REAL, eta REAL,
    best_val_acc REAL, best_val_loss REAL, best_epoch INTEGER, checkpoint TEXT, said TEXT,
    step_request INTEGER, step_delay REAL NOT NULL DEFAULT 0, lr_request REAL
);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, epoch INTEGER NOT NULL, loss REAL, elapsed REAL,
    PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS epochs (
    run_id TEXT NOT NULL, epoch INTEGER NOT NULL, train_loss REAL, train_acc REAL, val_loss REAL,
    val_acc REAL, epoch_seconds REAL, samples_per_s REAL, elapsed REAL, PRIMARY KEY (run_id, epoch)
);
CREATE TABLE IF NOT EXISTS logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, t REAL NOT NULL, message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS logs_run ON logs (run_id, id);
CREATE TABLE IF NOT EXISTS workers (
    run_id TEXT NOT NULL, rank INTEGER NOT NULL, host TEXT NOT NULL DEFAULT '', pid INTEGER,
    state TEXT NOT NULL DEFAULT 'starting', step INTEGER NOT NULL DEFAULT 0, epoch INTEGER NOT NULL DEFAULT 0,
    heartbeat REAL, message TEXT NOT NULL DEFAULT '', weights_sha256 TEXT, said TEXT, PRIMARY KEY (run_id, rank)
);
CREATE TABLE IF NOT EXISTS validations (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, epoch INTEGER NOT NULL, val_loss REAL, val_acc REAL,
    PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS lr_changes (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, learning_rate REAL NOT NULL, replayed INTEGER NOT NULL DEFAULT 0,
    t REAL NOT NULL, PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, who TEXT NOT NULL, action TEXT NOT NULL,
    run_id TEXT NOT NULL DEFAULT '', target TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '',
    allowed INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS people (
    name TEXT PRIMARY KEY COLLATE NOCASE, token_sha256 TEXT NOT NULL, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, spec TEXT NOT NULL, submitter TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL, status TEXT NOT NULL DEFAULT 'open'
);
CREATE TABLE IF NOT EXISTS drawings (
    id INTEGER PRIMARY KEY AUTOINCREMENT, image BLOB NOT NULL, label INTEGER NOT NULL, read_as INTEGER,
    run_id TEXT, created REAL NOT NULL, owner TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS dispatcher (
    id INTEGER PRIMARY KEY CHECK (id = 1), owner TEXT NOT NULL, expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS layer_stats (
    run_id TEXT NOT NULL, epoch INTEGER NOT NULL, param TEXT NOT NULL, kind TEXT NOT NULL, mean REAL, std REAL,
    min REAL, max REAL, norm REAL, zeros REAL, hist TEXT NOT NULL, PRIMARY KEY (run_id, epoch, param, kind)
);
"""
# Columns added since the first stores were written, added to an older store when it is opened.
ADDED_COLUMNS = (("runs", "said", "TEXT"), ("workers", "said", "TEXT"),  # messages with catalogue keys
                 ("runs", "step_request", "INTEGER"), ("runs", "step_delay", "REAL NOT NULL DEFAULT 0"),
                 ("runs", "lr_request", "REAL"),                          # a lesson's pacing
                 ("runs", "submitter", "TEXT NOT NULL DEFAULT ''"), ("runs", "queue_order", "REAL"),
                 ("runs", "waiter_pid", "INTEGER"), ("runs", "slots", "INTEGER NOT NULL DEFAULT 1"),  # the queue
                 ("runs", "sweep", "TEXT"), ("runs", "trial", "INTEGER"), ("runs", "trial_seed", "INTEGER"),  # sweeps
                 ("runs", "executor", "TEXT"), ("runs", "checkpoint_epoch", "INTEGER"),  # runs on Dask workers
                 ("drawings", "owner", "TEXT NOT NULL DEFAULT ''"))  # "my handwriting" is each person's
MAX_STEP_REQUEST = 10_000


class StoreError(Explained, OSError):
    """The run store's folder cannot be used; the message says what to set."""


class RunBusy(Explained, RuntimeError):
    """Another run is training; the message names it."""


def default_data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or PROJECT_ROOT / "runs").expanduser().resolve()


def _use_wal(db: sqlite3.Connection, patience_s: float = 30.0) -> None:
    """Switch a store to write-ahead logging. SQLite answers "database is locked" at once, without waiting on
    busy_timeout, when another process holds the new file while this one switches (3 processes opening one
    new store: 8 of 600 failed), so wait here."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class RunStore:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root).expanduser().resolve() if root else default_data_dir()
        self.checkpoints = self.root / "checkpoints"
        self.logs_dir = self.root / "logs"
        try:
            self.checkpoints.mkdir(parents=True, exist_ok=True)
            self.logs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError("store_unusable", root=self.root, why=str(e.strerror or e), env=DATA_DIR_ENV) from None
        self.db_path = self.root / "runs.sqlite"
        with self._connect() as db:
            _use_wal(db)
            db.executescript(SCHEMA)
        # a store written by an older version (and every new one: SCHEMA's CREATE TABLEs predate these columns).
        # One transaction: two processes opening a new store at once both saw a column missing and the second
        # ALTER failed with "duplicate column name" (two command lines started together, seen in CI)
        with self._tx() as db:
            for table, column, kind in ADDED_COLUMNS:
                if column not in {r["name"] for r in db.execute(f"PRAGMA table_info({table})")}:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    @contextmanager
    def _connect(self):
        db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout=30000")
        try:
            yield db
        finally:
            db.close()

    @contextmanager
    def _tx(self):
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # --- runs -------------------------------------------------------------------------------------------
    def create_run(self, config: TrainConfig, name: str | None = None, source: str = "dashboard",
                   status: str = "starting", exclusive: bool = True, **extra) -> str:
        """Insert a run (extra: more of its columns, written in the same insert). With exclusive, refuse
        (RunBusy) while another run is active: the check and the insert are one transaction, so two
        simultaneous Starts cannot both win."""
        config.validate()
        run_id = new_run_id()
        self.reconcile()
        with self._tx() as db:
            if exclusive:
                self._refuse_if_busy(db, "start")
            columns = ("id", "name", "source", "config", "status", "created", "total_steps", *extra)
            db.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                       (run_id, name or f"{config.network}-{run_id[9:15]}", source, config.to_json(), status,
                        time.time(), 0, *extra.values()))
        return run_id

    @staticmethod
    def _refuse_if_busy(db: sqlite3.Connection, then: str) -> None:
        """RunBusy when MAX_ACTIVE_RUNS are active; call inside the transaction that adds one."""
        busy = db.execute(f"SELECT name FROM runs WHERE status IN ({','.join('?' * len(ACTIVE))})",
                          ACTIVE).fetchall()
        if len(busy) >= MAX_ACTIVE_RUNS:
            raise RunBusy(f"run_busy_{then}", name=busy[0]["name"])

    def get(self, run_id: str) -> Run | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return self._run(row) if row else None

    def list_runs(self) -> list[Run]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM runs ORDER BY created DESC").fetchall()
        return [self._run(r) for r in rows]

    def active_run(self) -> Run | None:
        self.reconcile()
        with self._connect() as db:
            row = db.execute(f"SELECT * FROM runs WHERE status IN ({','.join('?' * len(ACTIVE))}) "
                             "ORDER BY created DESC LIMIT 1", ACTIVE).fetchone()
        return self._run(row) if row else None

    @staticmethod
    def _run(row: sqlite3.Row) -> Run:
        d = dict(row)
        d["config"] = TrainConfig.from_json(d["config"])
        d["said"] = Message.from_json(d.get("said"))
        return Run(**d)

    def update(self, run_id: str, **fields) -> None:
        if not fields:
            return
        cols = ", ".join(f"{k} = ?" for k in fields)
        with self._connect() as db:
            db.execute(f"UPDATE runs SET {cols} WHERE id = ?", (*fields.values(), run_id))

    def finish(self, run_id: str, status: str, message: str | Message = "") -> None:
        """End a run. A Message is kept with its catalogue key too, so pages can say it in their language."""
        assert status in FINISHED, status
        said = message.to_json() if isinstance(message, Message) else None
        with self._connect() as db:
            db.execute("UPDATE runs SET status = ?, message = ?, said = ?, finished = ?, phase = '' WHERE id = ?",
                       (status, str(message), said, time.time(), run_id))

    def rename(self, run_id: str, name: str) -> None:
        name = name.strip()
        if not name or len(name) > 80:
            raise ExplainedValueError("bad_run_name")
        self.update(run_id, name=name)

    def delete(self, run_id: str) -> None:
        check_run_id(run_id)  # before anything is touched: a row with a path for an id (a tampered store) too
        run = self.get(run_id)
        if run is None:
            return
        if run.active:
            raise RunBusy("delete_active", name=run.name, status=run.status)
        with self._tx() as db:
            for table in ("steps", "epochs", "logs", "layer_stats", "workers", "validations", "lr_changes"):
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        shutil.rmtree(self.checkpoint_path(run_id).parent, ignore_errors=True)
        shutil.rmtree(self.export_dir(run_id), ignore_errors=True)
        self.log_path(run_id).unlink(missing_ok=True)
        data = Path(run.config.data_dir) if run.config.data_dir else None
        if data is not None and data.parent == self.root / "finetune":  # a fine-tune's own data (core/runs/finetune.py)
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
        if run.status not in RESUMABLE:
            return Message("not_resumable_diverged" if run.status == "diverged" else "not_resumable",
                           {"status": run.status})
        if not self.checkpoint_path(run.id).exists():
            return Message("no_checkpoint_to_resume")
        return None

    def prepare_resume(self, run_id: str, waiter_pid: int | None = None) -> Run:
        """Queue a stopped, failed or interrupted run with a checkpoint again (ValueError when it cannot be
        resumed). The worker the queue starts for it continues from its checkpoint."""
        check_run_id(run_id)
        self.reconcile()
        with self._tx() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise ExplainedValueError("run_gone")
            run = self._run(row)
            why = self.resumable(run)
            if why:
                raise ExplainedValueError(f"resume_refused_{why.key}", name=run.name, **why.values)
            db.execute("UPDATE runs SET status = 'queued', request = 'run', message = '', said = NULL, "
                       "finished = NULL, pid = NULL, heartbeat = ?, phase = 'resuming', queue_order = ?, "
                       "waiter_pid = ? WHERE id = ?", (time.time(), time.time(), waiter_pid, run_id))
        self.log(run_id, f"resume requested (was {run.status})")
        return self.get(run_id)

    def truncate_after(self, run_id: str, epoch: int) -> int:
        """Forget metrics recorded after epoch (an unfinished epoch before a resume); returns the number of
        step rows dropped."""
        with self._tx() as db:
            dropped = db.execute("DELETE FROM steps WHERE run_id = ? AND epoch > ?", (run_id, epoch)).rowcount
            db.execute("DELETE FROM epochs WHERE run_id = ? AND epoch > ?", (run_id, epoch))
            db.execute("DELETE FROM layer_stats WHERE run_id = ? AND epoch > ?", (run_id, epoch))
            db.execute("DELETE FROM validations WHERE run_id = ? AND epoch > ?", (run_id, epoch))
            last = db.execute("SELECT MAX(step) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
            db.execute("DELETE FROM lr_changes WHERE run_id = ? AND step > ?", (run_id, last or 0))
            db.execute("UPDATE runs SET epoch = ?, step = ? WHERE id = ?", (epoch, last or 0, run_id))
        return dropped

    # --- requests from pages -----------------------------------------------------------------------------
    def request(self, run_id: str, what: str) -> RequestNotice:
        """Ask a run to pause, resume or stop. Returns what happened."""
        assert what in ("pause", "resume", "stop")
        run = self.get(run_id)
        if run is None:
            return RequestNotice("gone", what)
        if not run.active:
            return RequestNotice("finished", what, run.name, run.status)
        if what == "stop" and run.request == "stop":
            return RequestNotice("already_stopping", what, run.name, run.status)
        self.update(run_id, request={"pause": "pause", "resume": "run", "stop": "stop"}[what])
        return RequestNotice("requested", what, run.name, run.status)

    def request_steps(self, run_id: str, n: int) -> RequestNotice:
        """Ask a run to take n more steps and then pause (the Step button of a lesson)."""
        return self._pacing(run_id, "step", lambda run: {"request": "run", "step_request": n},
                            valid=isinstance(n, int) and 1 <= n <= MAX_STEP_REQUEST)

    def request_learning_rate(self, run_id: str, learning_rate: float) -> RequestNotice:
        """Ask a run to train on with another learning rate from its next step (recorded in lr_changes)."""
        return self._pacing(run_id, "learning_rate", lambda run: {"lr_request": float(learning_rate)},
                            valid=isinstance(learning_rate, (int, float)) and 0 < learning_rate <= 10)

    def set_step_delay(self, run_id: str, seconds: float) -> RequestNotice:
        """Slow motion: wait this long before every step (0: full speed; at most MAX_STEP_DELAY_S)."""
        return self._pacing(run_id, "delay", lambda run: {"step_delay": float(seconds)},
                            valid=isinstance(seconds, (int, float)) and 0 <= seconds <= MAX_STEP_DELAY_S,
                            parallel_ok=True)

    def _pacing(self, run_id: str, what: str, fields, valid: bool, parallel_ok: bool = False) -> RequestNotice:
        run = self.get(run_id)
        if run is None:
            return RequestNotice("gone", what)
        if not run.active:
            return RequestNotice("finished", what, run.name, run.status)
        if not valid:
            return RequestNotice("bad_value", what, run.name, run.status)
        if run.config.workers > 1 and not parallel_ok:
            return RequestNotice("not_parallel", what, run.name, run.status)
        self.update(run_id, **fields(run))
        return RequestNotice("requested", what, run.name, run.status)

    def take_learning_rate_request(self, run_id: str, learning_rate: float) -> None:
        """The worker took the request (a newer one written meanwhile stays)."""
        with self._connect() as db:
            db.execute("UPDATE runs SET lr_request = NULL WHERE id = ? AND lr_request = ?", (run_id, learning_rate))

    # --- metrics and logs (written by workers) -----------------------------------------------------------
    def add_steps(self, run_id: str, rows: list[tuple[int, int, float, float]], **progress) -> None:
        """Append (step, epoch, loss, elapsed) rows and update progress fields in one transaction."""
        with self._tx() as db:
            db.executemany("INSERT OR REPLACE INTO steps VALUES (?, ?, ?, ?, ?)",
                           [(run_id, *r) for r in rows])
            progress["heartbeat"] = time.time()
            cols = ", ".join(f"{k} = ?" for k in progress)
            db.execute(f"UPDATE runs SET {cols} WHERE id = ?", (*progress.values(), run_id))

    def add_epoch(self, run_id: str, m: EpochMetrics) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO epochs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (run_id, m.epoch, m.train_loss, m.train_acc, m.val_loss, m.val_acc, m.epoch_seconds,
                        m.samples_per_s, m.elapsed))

    def add_layer_stats(self, run_id: str, stats: list[LayerStat]) -> None:
        with self._tx() as db:
            db.executemany("INSERT OR REPLACE INTO layer_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           [(run_id, s.epoch, s.param, s.kind, s.mean, s.std, s.min, s.max, s.norm, s.zeros,
                             json.dumps({"edges": s.hist_edges, "counts": s.hist_counts})) for s in stats])

    def add_validation(self, run_id: str, v: ValidationEvent) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO validations VALUES (?, ?, ?, ?, ?)",
                       (run_id, v.step, v.epoch, v.val_loss, v.val_acc))

    def validations(self, run_id: str) -> list[ValidationEvent]:
        with self._connect() as db:
            rows = db.execute("SELECT step, epoch, val_loss, val_acc FROM validations WHERE run_id = ? ORDER BY step",
                              (run_id,)).fetchall()
        return [ValidationEvent(**dict(r)) for r in rows]

    def add_lr_change(self, run_id: str, e: LearningRateEvent) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO lr_changes VALUES (?, ?, ?, ?, ?)",
                       (run_id, e.step, e.learning_rate, int(e.replayed), time.time()))

    def lr_changes(self, run_id: str) -> list[LearningRateEvent]:
        """Every learning-rate change of a run, by step (asked for while it trained, or replayed)."""
        with self._connect() as db:
            rows = db.execute("SELECT step, learning_rate, replayed FROM lr_changes WHERE run_id = ? ORDER BY step",
                              (run_id,)).fetchall()
        return [LearningRateEvent(r["step"], r["learning_rate"], bool(r["replayed"])) for r in rows]

    def layer_stats(self, run_id: str) -> list[LayerStat]:
        """Every recorded weight/gradient summary of a run, by epoch then parameter (in network order)."""
        with self._connect() as db:
            rows = db.execute("SELECT * FROM layer_stats WHERE run_id = ? ORDER BY epoch, rowid",
                              (run_id,)).fetchall()
        out = []
        for r in rows:
            hist = json.loads(r["hist"])
            nums = {k: math.nan if r[k] is None else r[k] for k in ("mean", "std", "min", "max", "norm", "zeros")}
            out.append(LayerStat(r["epoch"], r["param"], r["kind"], **nums, hist_edges=tuple(hist["edges"]),
                                 hist_counts=tuple(hist["counts"])))
        return out

    # --- data-parallel ranks (the `workers` table) -------------------------------------------------------
    def set_rank(self, run_id: str, rank: int, **fields) -> None:
        """Create or update one data-parallel rank's row (state, step, epoch, pid, host, message: a Message is
        kept with its catalogue key too)."""
        fields["heartbeat"] = time.time()
        if "message" in fields:
            message = fields["message"]
            fields["message"] = str(message)
            fields["said"] = message.to_json() if isinstance(message, Message) else None
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO workers (run_id, rank) VALUES (?, ?)", (run_id, rank))
            cols = ", ".join(f"{k} = ?" for k in fields)
            db.execute(f"UPDATE workers SET {cols} WHERE run_id = ? AND rank = ?", (*fields.values(), run_id, rank))

    def ranks(self, run_id: str) -> list[RankRow]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM workers WHERE run_id = ? ORDER BY rank", (run_id,)).fetchall()
        return [RankRow(**{**dict(r), "said": Message.from_json(r["said"])}) for r in rows]

    def clear_ranks(self, run_id: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM workers WHERE run_id = ?", (run_id,))

    def log(self, run_id: str, message: str) -> None:
        with self._connect() as db:
            db.execute("INSERT INTO logs (run_id, t, message) VALUES (?, ?, ?)", (run_id, time.time(), message))

    def steps(self, run_id: str, max_points: int = 2000) -> list[StepRow]:
        """Step losses; more than max_points steps are averaged in equal buckets of consecutive steps (each row
        then has the bucket's last step, mean loss, min and max, and how many steps it stands for)."""
        with self._connect() as db:
            n = db.execute("SELECT COUNT(*) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
            every = max(1, -(-n // max_points))
            rows = db.execute("SELECT MAX(step) AS step, MAX(epoch) AS epoch, AVG(loss) AS loss, MIN(loss) AS loss_min, "
                              "MAX(loss) AS loss_max, MAX(elapsed) AS elapsed, COUNT(*) AS count FROM steps "
                              "WHERE run_id = ? GROUP BY (step - 1) / ? ORDER BY step", (run_id, every)).fetchall()
        return [StepRow(**dict(r)) for r in rows]

    def replay_config(self, run_id: str) -> TrainConfig | None:
        """The run's config with the learning-rate changes it made while it trained: what a re-run (or the run
        itself, resumed) replays at the same steps."""
        run = self.get(run_id)
        if run is None:
            return None
        recorded = {e.step: e.learning_rate for e in self.lr_changes(run_id)}
        if not recorded:
            return run.config
        return run.config.with_(lr_changes=tuple(sorted({**dict(run.config.lr_changes), **recorded}.items())))

    def epochs(self, run_id: str) -> list[EpochMetrics]:
        with self._connect() as db:
            rows = db.execute("SELECT epoch, train_loss, train_acc, val_loss, val_acc, epoch_seconds, samples_per_s, "
                              "elapsed FROM epochs WHERE run_id = ? ORDER BY epoch", (run_id,)).fetchall()
        return [EpochMetrics(**dict(r)) for r in rows]

    def logs(self, run_id: str, limit: int = 200) -> list[LogLine]:
        with self._connect() as db:
            rows = db.execute("SELECT t, message FROM logs WHERE run_id = ? ORDER BY id DESC LIMIT ?",
                              (run_id, limit)).fetchall()
        return [LogLine(**dict(r)) for r in reversed(rows)]

    # --- truth after crashes -----------------------------------------------------------------------------
    def reconcile(self) -> list[str]:
        """Mark active runs whose worker is gone (or silent for long) as interrupted. Returns their ids."""
        now, dead = time.time(), []
        with self._connect() as db:
            rows = db.execute(f"SELECT id, pid, heartbeat, created FROM runs WHERE status IN "
                              f"({','.join('?' * len(ACTIVE))})", ACTIVE).fetchall()
        for r in rows:
            last = r["heartbeat"] or r["created"]
            if r["pid"] is None:
                gone = now - last > HEARTBEAT_STALE_S  # a worker that never reported in
            else:
                gone = not pid_alive(r["pid"]) or now - last > HEARTBEAT_STALE_S
            if gone:
                self.finish(r["id"], "interrupted", Message("worker_gone"))
                self.log(r["id"], "marked interrupted: its worker process is gone")
                dead.append(r["id"])
        return dead

