"""Bringing a store's schema to this code's: Alembic migrations (core/runs/store/migrations). A personal SQLite
store migrates when it is opened; so does a new, empty database. A shared database (PostgreSQL) that holds an
older schema is refused until someone upgrades it on purpose (`python -m core.cli.store upgrade`, after a
backup): the hosts of a team then move together, not whenever one host's code is updated. A database whose
schema is newer than this code is always refused: older code must not write to it. A store of the SQLite-only
code (no version table) is adopted by the first migration, its rows kept.

Several processes opening one new store at once: the migration runs in a transaction holding the store's
"migrate" lock, and whoever comes second finds the schema at head and does nothing."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError

from core.runs.store.database import Database, DatabaseError, memory_url, shown_url

__all__ = ["VERSION_TABLE", "upgrade", "check_revision", "current_revision", "head_revision"]

VERSION_TABLE = "studio_schema_version"  # not alembic_version: Optuna keeps its own in the same database
MIGRATIONS = Path(__file__).parent / "migrations"
_migrated: set[str] = set()  # databases this process has seen at head (_seen_as)
_memory_template: list[Database] = []  # an in-memory database migrated once: new in-memory stores copy it


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["version_table"] = VERSION_TABLE
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:
        raise RuntimeError("the store's migrations folder has no migration")
    return head


def current_revision(db: Database) -> str | None:
    with db.read() as conn:
        return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def _seen_as(db: Database) -> str:
    """What this process has migrated: the URL, and for SQLite the file it named then (a file made anew since,
    after one was deleted, is migrated again)."""
    try:
        return f"{db.url}#{db.file.stat().st_ino}" if db.file is not None else db.url
    except OSError:
        return db.url + "#new"


def _known(revision: str) -> bool:
    try:
        return ScriptDirectory.from_config(_config()).get_revision(revision) is not None
    except CommandError:  # Alembic's word for a revision its scripts do not have
        return False


def check_revision(db: Database, current: str | None, head: str, explicit: bool) -> None:
    """DatabaseError when this code must not open (or migrate by itself) a database at revision current."""
    if current is None or current == head:
        return  # a new database, or one at this code's schema
    if not _known(current):
        raise DatabaseError("schema_newer", url=shown_url(db.url), revision=current, head=head)
    if db.is_server and not explicit:
        raise DatabaseError("schema_older", url=shown_url(db.url), revision=current, head=head)


def upgrade(db: Database, explicit: bool = False) -> None:
    """Migrate the store's database to head (once per process and database), unless check_revision refuses:
    explicit is a person's `python -m core.cli.store upgrade`, which may migrate a shared database."""
    if _seen_as(db) in _migrated and not db.in_memory:  # memory: a closed one opened again is new
        return
    head = head_revision()
    if db.in_memory and db.url != _template_url() and current_revision(db) is None:
        db.copy_from(_template())  # Alembic's run takes ~0.1 s a store; a copy of its result, microseconds
    current = current_revision(db)
    check_revision(db, current, head, explicit)
    if current != head:
        with db.write(lock="migrate") as conn:
            if MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision() != head:
                config = _config()
                config.attributes["connection"] = conn
                command.upgrade(config, "head")
    _migrated.add(_seen_as(db))


def _template_url() -> str:
    return memory_url("migrated-template")


def _template() -> Database:
    if not _memory_template:
        template = Database(_template_url())
        upgrade(template)
        _memory_template.append(template)
    return _memory_template[0]
