"""Bringing a store's schema to this code's: Alembic migrations (core/runs/store/migrations), run when a store
is opened. A store of the SQLite-only code (no version table) is adopted by the first migration, its rows kept.

Several processes opening one new store at once: the migration runs in a transaction holding the store's
"migrate" lock, and whoever comes second finds the schema at head and does nothing."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from core.runs.store.database import Database

__all__ = ["VERSION_TABLE", "upgrade", "current_revision", "head_revision"]

VERSION_TABLE = "studio_schema_version"  # not alembic_version: Optuna keeps its own in the same database
MIGRATIONS = Path(__file__).parent / "migrations"
_migrated: set[str] = set()  # databases this process has seen at head (_seen_as)


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


def upgrade(db: Database) -> None:
    """Migrate the store's database to head (once per process and database)."""
    if _seen_as(db) in _migrated:
        return
    head = head_revision()
    if current_revision(db) != head:
        with db.write(lock="migrate") as conn:
            if MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision() != head:
                config = _config()
                config.attributes["connection"] = conn
                command.upgrade(config, "head")
    _migrated.add(_seen_as(db))
