"""The run store package: the only code that talks to the database (SQLAlchemy Core; Alembic migrations).

    from core.runs.store import RunStore
    RunStore()                                     # ./runs (or $STUDIO_DATA_DIR) with its SQLite file
    RunStore(folder, "postgresql+psycopg://...")   # a team's database ($STUDIO_DATABASE_URL does the same)

`python -m core.cli.store copy --from URL --to URL` moves a store into another database (docs/deploy.md).
"""
from core.runs.store.database import DATABASE_URL_ENV, DatabaseError, shown_url
from core.runs.store.run_store import (DATA_DIR_ENV, HEARTBEAT_STALE_S, RunBusy, RunGone, RunStore, StoreError,
                                       default_data_dir)

__all__ = ["DATA_DIR_ENV", "DATABASE_URL_ENV", "DatabaseError", "HEARTBEAT_STALE_S", "RunBusy", "RunGone", "RunStore",
           "StoreError", "default_data_dir", "shown_url"]
