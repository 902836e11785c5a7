"""The server's own settings, one row a name: the secret that signs class links, tickets and cookies where the
database is a server (every app server of a team reads the same one; core/runs/store/server_settings.py).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("settings", sa.Column("name", sa.Text, primary_key=True),
                    sa.Column("value", sa.Text, nullable=False), sa.Column("updated", sa.Float, nullable=False))


def downgrade() -> None:
    op.drop_table("settings")
