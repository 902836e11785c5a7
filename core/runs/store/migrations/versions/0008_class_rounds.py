"""A lesson's class rounds (core/runs/people/class_round.py): the rounds the teacher opens and the drawings the
class's phones send in them, with each drawing's student display name, digit and reading.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "class_rounds", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("asked", sa.Integer), sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("started_by", sa.Text, nullable=False, server_default=""),
        sa.Column("started", sa.Float, nullable=False), sa.Column("ended", sa.Float),
        sa.Column("finetune_run", sa.Text), sa.Column("held_out", sa.Text))
    op.create_table(
        "class_drawings", sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("round_id", sa.Integer, nullable=False), sa.Column("student", sa.Text, nullable=False),
        sa.Column("image", sa.LargeBinary, nullable=False), sa.Column("label", sa.Integer, nullable=False),
        sa.Column("read_as", sa.Integer), sa.Column("hidden", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created", sa.Float, nullable=False))
    op.create_index("class_drawings_round", "class_drawings", ["round_id"])


def downgrade() -> None:
    op.drop_index("class_drawings_round", "class_drawings")
    op.drop_table("class_drawings")
    op.drop_table("class_rounds")
