"""Alembic's environment for the run store: migrations run on the connection the store hands over
(core/runs/store/migrate.py), inside the transaction that holds its migration lock."""
from alembic import context

from core.runs.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True,
                  version_table=context.config.attributes["version_table"])
with context.begin_transaction():
    context.run_migrations()
