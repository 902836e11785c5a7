"""Each epoch's confusion matrix on the validation split (epochs.val_confusion, JSON [true][predicted] counts):
what the confusion matrix's time-lapse on Train, Evaluate and the HTML report plays.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("epochs") as batch:
        batch.add_column(sa.Column("val_confusion", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("epochs") as batch:
        batch.drop_column("val_confusion")
