"""The database behind a run store: SQLite in the store's folder (the default) or a server named by a URL.

    STUDIO_DATABASE_URL=postgresql+psycopg://studio@db-host/studio    # or --database-url on every command

Transactions: `read()` sees one consistent snapshot; `write()` is a transaction that holds the store's write
lock where the decision it makes must not race (claiming a queued run, the dispatcher's lease, a name):
SQLite's BEGIN IMMEDIATE (one writer per file), PostgreSQL's transaction-scoped advisory lock on `lock`'s name
(writers of other names go on). `held(name)` keeps such a lock across several transactions (a sweep's advance).
"""
from __future__ import annotations

import fcntl
import functools
import inspect
import logging
import os
import sqlite3
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.exc import DatabaseError as SQLAlchemyDatabaseError

from core.messages import Explained

__all__ = ["DATABASE_URL_ENV", "Database", "DatabaseError", "database_url_setting", "sqlite_url", "memory_url",
           "shown_url", "dispose", "outlasting_disconnects", "WORKER_PATIENCE_S"]

DATABASE_URL_ENV = "STUDIO_DATABASE_URL"
BUSY_TIMEOUT_MS = 30_000
FULL = ("database or disk is full", "disk I/O error", "No space left on device", "could not extend file")
READ_ONLY = ("readonly database", "read-only file system", "Read-only file system")
BROKEN = ("file is not a database", "database disk image is malformed", "no such table", "does not exist")
CONNECT_TIMEOUT_S = 10
WORKER_PATIENCE_S = 120.0  # a training process waits this long for its database to come back (a restart)
_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr (the run's log)
T = TypeVar("T")


class DatabaseError(Explained, OSError):
    """The database cannot be reached or used; the message says which and what to set."""


def database_url_setting() -> str | None:
    return os.environ.get(DATABASE_URL_ENV, "").strip() or None


def sqlite_url(path: Path, read_only: bool = False) -> str:
    """SQLite's URL for the file; read_only: opened immutable (a store on a read-only mount: read, exported)."""
    return f"sqlite:///file:{path}?mode=ro&immutable=1&uri=true" if read_only else f"sqlite:///{path}"


def memory_url(name: str) -> str:
    """An SQLite database in this process's memory, named so that every connection of the process opens the same
    one (shared cache): a store for tests that start no child process, as Optuna's InMemoryStorage. It lives until
    dispose(url)."""
    return f"sqlite:///file:studio-memory-{name}?mode=memory&cache=shared&uri=true"


def _in_memory(url) -> bool:
    return url.get_backend_name() == "sqlite" and url.query.get("mode") == "memory"


def shown_url(url: str) -> str:
    """The URL with its password hidden (for messages and pages)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<not a database URL>"


_engines: dict[str, Engine] = {}  # one engine (and pool) per database in a process, shared by its RunStores
_keepers: dict[str, Connection] = {}  # an in-memory database's own connection: it lives while one is open
_optuna_storages: dict[str, object] = {}
_unreachable: set[str] = set()      # databases this process failed to reach and has not reached since
_recovered: dict[str, float] = {}   # when this process reached each again after failing to


def dispose(url: str) -> None:
    """Close the pooled connections to url (a test's database, before it is dropped)."""
    keeper = _keepers.pop(url, None)
    if keeper is not None:
        keeper.close()
    engine = _engines.pop(url, None)
    if engine is not None:
        engine.dispose()


def _lock_key(name: str) -> int:
    return zlib.crc32(f"studio:{name}".encode())  # a stable 32-bit key per name (pg_advisory_xact_lock's bigint)


class Database:
    """One engine per store; every query of the store goes through read(), write() or held().

    patience_s: how long a connection is retried while the database cannot be reached (0: the error at once, as
    pages want, to say it; a training process rides out a database restart: WORKER_PATIENCE_S). recovered_at:
    when this process reached the database again after failing to (None: it never failed), so that a heartbeat
    nobody could write meanwhile is not read as a dead worker."""

    patience_s: float = 0.0

    def __init__(self, url: str, lock_dir: Path | None = None):
        self.url = url
        self.lock_dir = lock_dir  # SQLite: held() takes a file lock here (one host, as SQLite itself)
        self._held = threading.local()  # .count: held() blocks open in this thread (a restart ends their locks)
        if url not in _engines:
            _engines[url] = self._engine(url)
            if _in_memory(_engines[url].url):
                _keepers[url] = _engines[url].connect()
        self.engine = _engines[url]
        self.dialect = self.engine.dialect.name  # "sqlite" | "postgresql"
        if self.dialect not in ("sqlite", "postgresql"):
            raise DatabaseError("database_unsupported", url=shown_url(url), env=DATABASE_URL_ENV)

    @property
    def is_server(self) -> bool:
        """A database every host reaches (not a file in one host's folder)."""
        return self.dialect != "sqlite"

    @staticmethod
    def _engine(url: str) -> Engine:
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise DatabaseError("database_url_invalid", url=shown_url(url), env=DATABASE_URL_ENV) from None
        try:
            if parsed.get_backend_name() == "sqlite":
                engine = create_engine(parsed, poolclass=QueuePool, pool_size=4, max_overflow=16,
                                       connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "isolation_level": None,
                                                     "check_same_thread": False})
                _sqlite_transactions(engine, read_only=parsed.query.get("mode") == "ro")
                return engine
            return create_engine(parsed, pool_pre_ping=True, pool_size=2, max_overflow=8, pool_recycle=600,
                                 connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
        except (NoSuchModuleError, ImportError) as e:
            raise DatabaseError("database_driver", url=shown_url(url), why=str(e)) from None

    def remember_file(self) -> None:
        """SQLite: note which file the store's database is (after it is opened and migrated), so that a file
        deleted or replaced while the studio runs is said, not silently read as another (empty) store."""
        if self.dialect == "sqlite" and self.file is not None:
            st = self.file.stat()
            self._identity = (st.st_dev, st.st_ino)

    @property
    def in_memory(self) -> bool:
        """An SQLite database in this process's memory (memory_url): no other process can open it."""
        return _in_memory(self.engine.url)

    def copy_from(self, other: Database) -> None:
        """Make this in-memory database a copy of other, whole (SQLite's backup)."""
        if not (self.in_memory and other.in_memory):
            raise RuntimeError("copy_from copies one in-memory database into another")
        source, target = (_keepers[db.url].connection.dbapi_connection for db in (other, self))
        assert isinstance(source, sqlite3.Connection) and isinstance(target, sqlite3.Connection)
        source.backup(target)

    @property
    def file(self) -> Path | None:
        if self.in_memory:
            return None
        name = self.engine.url.database
        if name and name.startswith("file:"):  # a URI filename (a read-only store)
            name = name[len("file:"):]
        return Path(name) if self.dialect == "sqlite" and name and name != ":memory:" else None

    @property
    def read_only(self) -> bool:
        return self.dialect == "sqlite" and self.engine.url.query.get("mode") == "ro"

    def _check_file(self) -> None:
        if getattr(self, "_identity", None) is None or self.file is None:
            return
        try:
            st = self.file.stat()
            same = (st.st_dev, st.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            self.engine.dispose()  # pooled connections would go on with the deleted file
            raise DatabaseError("database_file_gone", path=self.file)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._said(), self._connection() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self, lock: str | None = None) -> Iterator[Connection]:
        with self._said(), self._connection(immediate=True) as conn, conn.begin():
            if lock is not None and self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(lock)})
            yield conn

    def optuna_storage(self):
        """Optuna's RDB storage on this database (its own tables beside the store's; one per process)."""
        import optuna  # deferred: only sweeps need Optuna (and its import is slow)
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # its INFO lines would fill the worker's log
        if self.url not in _optuna_storages:
            kwargs = {"connect_args": {"timeout": 30}} if self.dialect == "sqlite" else {"pool_pre_ping": True}
            with self._said():  # a full disk or a broken file as a message, as for the store's own tables
                _optuna_storages[self.url] = optuna.storages.RDBStorage(self.url, engine_kwargs=kwargs)
        return _optuna_storages[self.url]

    @contextmanager
    def _said(self) -> Iterator[None]:
        """A database that is not one any more (a corrupted file, tables gone) as a message, not a traceback."""
        try:
            yield
        except SQLAlchemyDatabaseError as e:
            why = _first_line(e)
            if any(s in why for s in READ_ONLY):
                raise DatabaseError("database_read_only", url=self.where, why=why) from None
            if any(s in why for s in FULL):
                raise DatabaseError("database_full", url=shown_url(self.url), why=why) from None
            if not any(s in why for s in BROKEN):
                raise
            raise DatabaseError("database_broken", url=shown_url(self.url), why=why) from None

    @contextmanager
    def held(self, name: str) -> Iterator[None]:
        """Hold the named lock for a block of several transactions (one holder per store on every host)."""
        if self.dialect == "postgresql":
            with self._connection() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _lock_key(name)})
                conn.commit()
                self._held.count = self._holding + 1
                try:
                    yield
                finally:
                    self._held.count -= 1
                    _unlock(conn, name)
            return
        if self.lock_dir is None:
            raise RuntimeError("a SQLite store's locks need its folder (Database(url, lock_dir=...))")
        with open(self.lock_dir / f"{name}.lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    @contextmanager
    def _connection(self, immediate: bool = False) -> Iterator[Connection]:
        self._check_file()
        conn = self._connect()
        try:
            if immediate:
                conn = conn.execution_options(studio_immediate=True)
            yield conn
        finally:
            conn.close()

    @property
    def where(self) -> str:
        """The SQLite file, or the URL without its password (for messages)."""
        return str(self.file) if self.file is not None else shown_url(self.url)

    def _sqlite_unopenable(self, why: str) -> DatabaseError:
        if any(s in why for s in FULL):
            return DatabaseError("database_full", url=self.where, why=why)
        if any(s in why for s in READ_ONLY):
            return DatabaseError("database_read_only", url=self.where, why=why)
        return DatabaseError("sqlite_unopenable", url=self.where, why=why, env="STUDIO_DATA_DIR")

    @property
    def recovered_at(self) -> float | None:
        """When this process reached the database again after failing to (None: it never failed)."""
        return _recovered.get(self.url)

    def _connect(self) -> Connection:
        """A connection; while the database cannot be reached, retried with back-off for up to patience_s."""
        deadline, wait = time.monotonic() + self.patience_s, 0.25
        while True:
            try:
                conn = self.engine.connect()
            except OperationalError as e:
                if self.dialect == "sqlite":  # a file: no server to wait for; its folder is the matter
                    raise self._sqlite_unopenable(_first_line(e)) from None
                _unreachable.add(self.url)
                if time.monotonic() + wait > deadline:
                    raise DatabaseError("database_unreachable", url=shown_url(self.url), why=_first_line(e),
                                        env=DATABASE_URL_ENV) from None
                if wait == 0.25:
                    _LOG.warning("the run store's database %s cannot be reached (%s): retrying for up to %.0f s",
                                 shown_url(self.url), _first_line(e), deadline - time.monotonic())
                time.sleep(wait)
                wait = min(wait * 2, 4.0)
                continue
            if self.url in _unreachable:
                _unreachable.discard(self.url)
                _recovered[self.url] = time.time()
                _LOG.warning("the run store's database %s is back", shown_url(self.url))
            return conn

    @property
    def _holding(self) -> int:
        return getattr(self._held, "count", 0)

    def again_after_disconnect(self, attempt: Callable[[], T]) -> T:
        """attempt(), made again while the server drops the connection under it, for up to patience_s (0: the
        error at once). A server that stops while a statement is under way (a restart) closes the connection and
        rolls its transaction back; the next attempt's connection waits for the server (_connect). attempt must be
        one that may be made twice: the server may have committed a transaction whose answer never arrived. Not
        inside held(): the lock ended with the server's connection, and what it guarded must not go on without it."""
        deadline = time.monotonic() + self.patience_s
        while True:
            try:
                return attempt()
            except DBAPIError as e:
                if not e.connection_invalidated or time.monotonic() >= deadline or self._holding:
                    raise
                _unreachable.add(self.url)  # noted as back (recovered_at) once a connection is made again
                _LOG.warning("the run store's database %s closed the connection during a statement (%s): "
                             "making the transaction again", shown_url(self.url), _first_line(e))

    def upsert(self, table, keys: tuple[str, ...]):
        """An INSERT that replaces the row with the same keys, to execute with the rows as its parameters
        (`conn.execute(db.upsert(table, keys), rows)`): one statement whatever the number of rows, which SQLAlchemy
        compiles once per process (a VALUES list of the rows compiled again for every new count: 3-6 ms of each
        flush of a run's steps). On SQLite it is INSERT OR REPLACE, which gives the new row a new rowid: the relay
        of a remote run (core/runs/worker/mirror.py) finds changed rows by rowid."""
        if self.dialect == "sqlite":
            return sqlite.insert(table).prefix_with("OR REPLACE")
        stmt = postgresql.insert(table)
        others = {c.name: stmt.excluded[c.name] for c in table.columns if c.name not in keys}
        return stmt.on_conflict_do_update(index_elements=list(keys), set_=others) if others else \
            stmt.on_conflict_do_nothing(index_elements=list(keys))

    def insert_ignore(self, table, row: dict, keys: tuple[str, ...]):
        if self.dialect == "sqlite":
            return sqlite.insert(table).prefix_with("OR IGNORE").values(row)
        return postgresql.insert(table).values(row).on_conflict_do_nothing(index_elements=list(keys))


def _unlock(conn: Connection, name: str) -> None:
    try:
        conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _lock_key(name)})
        conn.commit()
    except DBAPIError as e:
        if not e.connection_invalidated:
            raise
        _LOG.warning("the lock %r ended with its connection to the database (%s)", name, _first_line(e))


def outlasting_disconnects(cls: type[T]) -> type[T]:
    """Make every public method of cls (a store: its database is `self.db`) again as a whole when the server
    drops the connection under it while its Database rides out outages (patience_s > 0, a training process):
    Database.again_after_disconnect. A method is made twice only when the server went away during its COMMIT
    (before that, the server rolled the transaction back). Most of a worker's writes are upserts and updates to a
    value, which leave what one did; an inserted row (a log line, a run) may then be written twice."""
    for name in dir(cls):
        method = inspect.getattr_static(cls, name)
        if not name.startswith("_") and inspect.isfunction(method):
            setattr(cls, name, _made_again_after_disconnect(method))
    return cls


def _made_again_after_disconnect(method):
    @functools.wraps(method)
    def made(self, *args, **kwargs):
        if self.db.patience_s <= 0:  # a page: the error at once, to say it
            return method(self, *args, **kwargs)
        return self.db.again_after_disconnect(lambda: method(self, *args, **kwargs))
    return made


def _first_line(e: Exception) -> str:
    said = str(getattr(e, "orig", e)).strip()
    return said.splitlines()[0] if said else type(e).__name__


def _sqlite_transactions(engine: Engine, read_only: bool = False) -> None:
    """SQLite as a store needs: write-ahead logging (readers never wait for a writer), a busy timeout, and real
    transactions that SQLAlchemy begins (pysqlite's own begin is turned off), IMMEDIATE for writes so that a
    check and the write it allows hold the write lock together."""

    in_memory = _in_memory(engine.url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if in_memory:  # shared cache: a read would otherwise wait on another connection's open write
            dbapi_conn.execute("PRAGMA read_uncommitted=1")
        if not read_only and not in_memory:  # an immutable file keeps its journal mode; memory has no file
            _use_wal(dbapi_conn)
        dbapi_conn.execute("PRAGMA foreign_keys=OFF")

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("studio_immediate") else "BEGIN")


def _use_wal(dbapi_conn, patience_s: float = 30.0) -> None:
    """SQLite answers "database is locked" at once, without waiting on busy_timeout, when another process holds
    a new file while this one switches it to WAL, so wait here."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            mode = dbapi_conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                dbapi_conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
