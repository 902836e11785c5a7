"""The command lines' way to name a store: `--store DIR` (checkpoints, logs, and the SQLite file by default) and
`--database-url URL` (a team's database; default $STUDIO_DATABASE_URL), the same on every command."""
from __future__ import annotations

import argparse
import os
import sys

from core.runs.store.database import DATABASE_URL_ENV, DatabaseError
from core.runs.store.run_store import DATA_DIR_ENV, RunStore, StoreError

__all__ = ["add_store_arguments", "open_store", "store_from"]


def add_store_arguments(ap: argparse.ArgumentParser, required: bool = False) -> None:
    ap.add_argument("--store", default=None, required=required,
                    help=f"run store folder: checkpoints, logs, and its SQLite database when no URL is given "
                         f"(default: ${DATA_DIR_ENV} or ./runs)")
    ap.add_argument("--database-url", default=None, metavar="URL",
                    help=f"the run store's database, e.g. postgresql+psycopg://studio@db-host/studio "
                         f"(default: ${DATABASE_URL_ENV}, else SQLite in the store folder)")


def open_store(args: argparse.Namespace, upgrade_schema: bool = False) -> RunStore:
    """The store the arguments name; a folder or database that cannot be used ends the command with the
    reason (exit status 2), not a traceback. upgrade_schema: migrate a shared database's older schema."""
    try:
        return RunStore(args.store, args.database_url, upgrade_schema=upgrade_schema)
    except (DatabaseError, StoreError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def store_from(store: RunStore | str | os.PathLike | None = None) -> RunStore:
    """The store one value names, as a script or `--store` gives it: a RunStore, a folder, a database URL
    (anything with "://"), or None for the default one."""
    if isinstance(store, RunStore):
        return store
    if store is not None and "://" in str(store):
        return RunStore(database_url=str(store))
    return RunStore(store)
