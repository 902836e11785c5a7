"""The schema as the SQLite-only store left it (commit ed17fa8): its 13 tables with every column it added.

Written to adopt a store of that code too: a table that exists is kept and gains only the columns it lacks
(that store added columns as it grew and had no version table), a table that does not is created.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

T, R, INT, B = sa.Text, sa.Float, sa.Integer, sa.LargeBinary


def col(name, kind, *, null=True, default=None, pk=False, auto=False):
    return sa.Column(name, kind, nullable=null and not pk, server_default=default, primary_key=pk,
                     autoincrement=auto if pk and kind is INT else "auto")


TABLES = {
    "runs": [col("id", T, pk=True), col("name", T, null=False), col("source", T, null=False),
             col("config", T, null=False), col("status", T, null=False), col("message", T, null=False, default=""),
             col("request", T, null=False, default="run"), col("created", R, null=False), col("started", R),
             col("finished", R), col("heartbeat", R), col("pid", INT), col("phase", T, null=False, default=""),
             col("step", INT, null=False, default="0"), col("total_steps", INT, null=False, default="0"),
             col("epoch", INT, null=False, default="0"), col("samples_per_s", R), col("eta", R),
             col("best_val_acc", R), col("best_val_loss", R), col("best_epoch", INT), col("checkpoint", T),
             col("said", T), col("step_request", INT), col("step_delay", R, null=False, default="0"),
             col("lr_request", R), col("submitter", T, null=False, default=""), col("queue_order", R),
             col("waiter_pid", INT), col("slots", INT, null=False, default="1"), col("sweep", T), col("trial", INT),
             col("trial_seed", INT), col("executor", T), col("checkpoint_epoch", INT)],
    "steps": [col("run_id", T, pk=True), col("step", INT, pk=True), col("epoch", INT, null=False), col("loss", R),
              col("elapsed", R)],
    "epochs": [col("run_id", T, pk=True), col("epoch", INT, pk=True), col("train_loss", R), col("train_acc", R),
               col("val_loss", R), col("val_acc", R), col("epoch_seconds", R), col("samples_per_s", R),
               col("elapsed", R)],
    "logs": [col("id", INT, pk=True, auto=True), col("run_id", T, null=False), col("t", R, null=False),
             col("message", T, null=False)],
    "workers": [col("run_id", T, pk=True), col("rank", INT, pk=True), col("host", T, null=False, default=""),
                col("pid", INT), col("state", T, null=False, default="starting"),
                col("step", INT, null=False, default="0"), col("epoch", INT, null=False, default="0"),
                col("heartbeat", R), col("message", T, null=False, default=""),
                col("weights_sha256", T), col("said", T)],
    "validations": [col("run_id", T, pk=True), col("step", INT, pk=True), col("epoch", INT, null=False),
                    col("val_loss", R), col("val_acc", R)],
    "lr_changes": [col("run_id", T, pk=True), col("step", INT, pk=True), col("learning_rate", R, null=False),
                   col("replayed", INT, null=False, default="0"), col("t", R, null=False)],
    "history": [col("id", INT, pk=True, auto=True), col("t", R, null=False), col("who", T, null=False),
                col("action", T, null=False), col("run_id", T, null=False, default=""),
                col("target", T, null=False, default=""), col("detail", T, null=False, default=""),
                col("allowed", INT, null=False, default="1")],
    "people": [col("name", T, pk=True), col("token_sha256", T, null=False), col("created", R, null=False)],
    "sweeps": [col("id", T, pk=True), col("name", T, null=False), col("spec", T, null=False),
               col("submitter", T, null=False, default=""), col("created", R, null=False),
               col("status", T, null=False, default="open")],
    "drawings": [col("id", INT, pk=True, auto=True), col("image", B, null=False), col("label", INT, null=False),
                 col("read_as", INT), col("run_id", T), col("created", R, null=False),
                 col("owner", T, null=False, default="")],
    "dispatcher": [col("id", INT, pk=True), col("owner", T, null=False), col("expires", R, null=False)],
    "layer_stats": [col("run_id", T, pk=True), col("epoch", INT, pk=True), col("param", T, pk=True),
                    col("kind", T, pk=True), col("mean", R), col("std", R), col("min", R), col("max", R),
                    col("norm", R), col("zeros", R), col("hist", T, null=False)],
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    present = set(inspector.get_table_names())
    for name, columns in TABLES.items():
        if name not in present:
            extra = [sa.CheckConstraint("id = 1", name="one_lease")] if name == "dispatcher" else []
            op.create_table(name, *columns, *extra)
            continue
        have = {c["name"] for c in inspector.get_columns(name)}
        missing = [c for c in columns if c.name not in have]
        if missing:
            with op.batch_alter_table(name) as batch:
                for c in missing:
                    batch.add_column(sa.Column(c.name, c.type, nullable=c.nullable, server_default=c.server_default))
    if "logs" not in present or "logs_run" not in {i["name"] for i in inspector.get_indexes("logs")}:
        op.create_index("logs_run", "logs", ["run_id", "id"])


def downgrade() -> None:
    for name in reversed(list(TABLES)):
        op.drop_table(name)
