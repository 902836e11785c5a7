"""Runs carry tags and a note (the Runs page searches and filters by them): tags as a JSON list, the note as
text; both empty for the runs already stored.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("tags", sa.Text, nullable=False, server_default="[]"))
        batch.add_column(sa.Column("notes", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("notes")
        batch.drop_column("tags")
