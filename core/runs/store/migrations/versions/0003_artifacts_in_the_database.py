"""Artifacts in the database: a run's checkpoint files (0.3-3 MB) kept where every host reaches them, for stores
whose database is a server (a SQLite store keeps them in its folder only, as before).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("artifacts",
                    sa.Column("run_id", sa.Text, nullable=False), sa.Column("name", sa.Text, nullable=False),
                    sa.Column("content", sa.LargeBinary, nullable=False), sa.Column("size", sa.Integer, nullable=False),
                    sa.Column("sha256", sa.Text, nullable=False), sa.Column("updated", sa.Float, nullable=False),
                    sa.PrimaryKeyConstraint("run_id", "name"))


def downgrade() -> None:
    op.drop_table("artifacts")
