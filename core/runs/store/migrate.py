"""Bringing a store's schema to this code's: Alembic migrations (core/runs/store/migrations). A personal SQLite
store migrates when it is opened; so does a new, empty database. A shared database (PostgreSQL) that holds an
older schema is refused until someone upgrades it on purpose (`python -m core.cli.store upgrade`, after a
backup): the hosts of a team then move together, not whenever one host's code is updated. A database whose
schema is newer than this code is always refused: older code must not write to it. A store of the SQLite-only
code (no version table) is adopted by the first migration, its rows kept.

Several processes opening one new store at once: the migration runs in a transaction holding the store's
"migrate" lock, and whoever comes second finds the schema at head and does nothing.

A store already at the newest migration is opened without importing Alembic (~0.15 s of every process's start:
its dialects, Mako and Pygments): its version is read with one query, and the newest migration is the highest
number among the files of migrations/versions, each of which names its revision by its number
(tests/unit/test_store_databases.py holds both to what Alembic itself finds). Anything else goes through
Alembic."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from core.runs.store.database import Database, DatabaseError, memory_url, shown_url

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["VERSION_TABLE", "upgrade", "check_revision", "current_revision", "head_revision", "newest_file_revision"]

VERSION_TABLE = "studio_schema_version"  # not alembic_version: Optuna keeps its own in the same database
MIGRATIONS = Path(__file__).parent / "migrations"
_migrated: set[str] = set()  # databases this process has seen at head (_seen_as)
_memory_template: list[Database] = []  # an in-memory database migrated once: new in-memory stores copy it


def _config() -> Config:
    from alembic.config import Config  # deferred: only a store that is not at the newest migration needs Alembic
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["version_table"] = VERSION_TABLE
    return config


def head_revision() -> str:
    """The head as Alembic finds it among the migration scripts."""
    from alembic.script import ScriptDirectory  # deferred: see the module's docstring
    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:
        raise RuntimeError("the store's migrations folder has no migration")
    return head


def newest_file_revision() -> str:
    """The number of the newest migration file: its revision (each file is named by its revision's number)."""
    return max(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def current_revision(db: Database) -> str | None:
    """The revision the database's version table holds (None: a new database, or the SQLite-only code's)."""
    with db.read() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        revisions = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
        if len(revisions) > 1:  # branches this code never makes: Alembic's own answer (an error naming them)
            from alembic.runtime.migration import MigrationContext  # deferred: see the module's docstring
            return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()
    return revisions[0] if revisions else None


def _seen_as(db: Database) -> str:
    """What this process has migrated: the URL, and for SQLite the file it named then (a file made anew since,
    after one was deleted, is migrated again)."""
    try:
        return f"{db.url}#{db.file.stat().st_ino}" if db.file is not None else db.url
    except OSError:
        return db.url + "#new"


def _known(revision: str) -> bool:
    from alembic.script import ScriptDirectory  # deferred: see the module's docstring
    from alembic.util.exc import CommandError
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
    if db.in_memory and db.url != _template_url() and current_revision(db) is None:
        db.copy_from(_template())  # Alembic's run takes ~0.1 s a store; a copy of its result, microseconds
    current = current_revision(db)
    if current is None or current != newest_file_revision():
        _migrate(db, current, explicit)
    _migrated.add(_seen_as(db))


def _migrate(db: Database, current: str | None, explicit: bool) -> None:
    """Alembic's upgrade to head, where check_revision allows it."""
    from alembic import command  # deferred: see the module's docstring
    from alembic.runtime.migration import MigrationContext
    head = head_revision()
    check_revision(db, current, head, explicit)
    if current != head:
        with db.write(lock="migrate") as conn:
            if MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision() != head:
                config = _config()
                config.attributes["connection"] = conn
                command.upgrade(config, "head")


def _template_url() -> str:
    return memory_url("migrated-template")


def _template() -> Database:
    if not _memory_template:
        template = Database(_template_url())
        upgrade(template)
        _memory_template.append(template)
    return _memory_template[0]
