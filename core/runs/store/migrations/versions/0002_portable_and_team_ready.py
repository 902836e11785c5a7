"""What a store shared by a team needs: the order of layer statistics kept in a column (not SQLite's rowid),
people's names unique NFKC-normalised and case-folded in every script ("José" and "JOSÉ", "Straße" and
"STRASSE", full-width "Ａｎｎ" and "Ann" are one name, not only ASCII's case), and
indexes for the queue's and sweeps' questions; the host a run's process lives on (its pid means nothing
elsewhere).

A store holding two names that fold alike keeps the older claim; the newer browser picks another name.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def fold(name: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name.strip()).casefold())


def upgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table("layer_stats") as batch:
        batch.add_column(sa.Column("position", sa.Integer))
    if bind.dialect.name == "sqlite":  # the order the old store kept them in
        op.execute("UPDATE layer_stats SET position = rowid")
    with op.batch_alter_table("people") as batch:
        batch.add_column(sa.Column("folded", sa.Text))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("host", sa.Text))
    people = sa.table("people", sa.column("name", sa.Text), sa.column("created", sa.Float),
                      sa.column("folded", sa.Text))
    seen = set()
    for name, _created in bind.execute(sa.select(people.c.name, people.c.created).order_by(people.c.created)).all():
        key = fold(name)
        if key in seen:
            bind.execute(people.delete().where(people.c.name == name))
        else:
            bind.execute(people.update().where(people.c.name == name).values(folded=key))
            seen.add(key)
    op.create_index("people_folded", "people", ["folded"], unique=True)
    op.create_index("runs_status", "runs", ["status"])
    op.create_index("runs_sweep", "runs", ["sweep"])


def downgrade() -> None:
    op.drop_index("runs_sweep", "runs")
    op.drop_index("runs_status", "runs")
    op.drop_index("people_folded", "people")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("host")
    with op.batch_alter_table("people") as batch:
        batch.drop_column("folded")
    with op.batch_alter_table("layer_stats") as batch:
        batch.drop_column("position")
