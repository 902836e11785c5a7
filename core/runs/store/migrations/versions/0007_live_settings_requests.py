"""Live settings by name (core/live_settings.py): what a run is asked while it trains moves from one column a knob
(runs.lr_request, runs.step_request) to a requests table, a row a run and setting; the changes it made move from
lr_changes (learning rates only) to setting_changes (learning rate, momentum, weight decay). Rows are copied.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""
import time

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    requests = op.create_table(
        "requests", sa.Column("run_id", sa.Text, nullable=False), sa.Column("setting", sa.Text, nullable=False),
        sa.Column("value", sa.Float, nullable=False), sa.Column("who", sa.Text, nullable=False, server_default=""),
        sa.Column("asked", sa.Float, nullable=False), sa.PrimaryKeyConstraint("run_id", "setting"))
    changes = op.create_table(
        "setting_changes", sa.Column("run_id", sa.Text, nullable=False), sa.Column("step", sa.Integer, nullable=False),
        sa.Column("setting", sa.Text, nullable=False), sa.Column("value", sa.Float, nullable=False),
        sa.Column("replayed", sa.Integer, nullable=False, server_default="0"), sa.Column("t", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "step", "setting"))
    conn = op.get_bind()
    now = time.time()
    asked = conn.execute(sa.text("SELECT id, lr_request, step_request FROM runs "
                                 "WHERE lr_request IS NOT NULL OR step_request IS NOT NULL")).all()
    rows = [dict(run_id=run_id, setting=setting, value=float(value), who="", asked=now)
            for run_id, rate, steps in asked for setting, value in (("learning_rate", rate), ("step", steps))
            if value is not None]
    if rows:
        op.bulk_insert(requests, rows)
    old = conn.execute(sa.text("SELECT run_id, step, learning_rate, replayed, t FROM lr_changes")).all()
    if old:
        op.bulk_insert(changes, [dict(run_id=r, step=s, setting="learning_rate", value=v, replayed=p, t=t)
                                 for r, s, v, p, t in old])
    op.drop_table("lr_changes")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lr_request")
        batch.drop_column("step_request")


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("step_request", sa.Integer))
        batch.add_column(sa.Column("lr_request", sa.Float))
    op.create_table(
        "lr_changes", sa.Column("run_id", sa.Text, nullable=False), sa.Column("step", sa.Integer, nullable=False),
        sa.Column("learning_rate", sa.Float, nullable=False),
        sa.Column("replayed", sa.Integer, nullable=False, server_default="0"), sa.Column("t", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "step"))
    op.execute("INSERT INTO lr_changes (run_id, step, learning_rate, replayed, t) SELECT run_id, step, value, "
               "replayed, t FROM setting_changes WHERE setting = 'learning_rate'")
    op.drop_table("setting_changes")
    op.drop_table("requests")
