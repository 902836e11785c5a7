"""The run store's tables, as SQLAlchemy Core metadata: what the migrations create and every query names.

The same tables on SQLite (one person, the default) and PostgreSQL (a team). Times are seconds since the epoch
(floats); configs, specs and messages are JSON text; drawings are 28×28 uint8 images as bytes.
"""
from __future__ import annotations

from sqlalchemy import (Column, Float, Index, Integer, LargeBinary, MetaData, Table, Text, CheckConstraint,
                        PrimaryKeyConstraint)

__all__ = ["metadata", "runs", "steps", "epochs", "logs", "workers", "validations", "setting_changes", "requests",
           "history", "people", "sweeps", "drawings", "class_rounds", "class_drawings",
           "dispatcher", "layer_stats", "artifacts", "settings",
           "RUN_TABLES", "ALL_TABLES"]

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("config", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("message", Text, nullable=False, server_default=""),
    Column("request", Text, nullable=False, server_default="run"),
    Column("created", Float, nullable=False),
    Column("started", Float),
    Column("finished", Float),
    Column("heartbeat", Float),
    Column("pid", Integer),
    Column("host", Text),                 # where pid lives (a team's runs train on several hosts)
    Column("phase", Text, nullable=False, server_default=""),
    Column("step", Integer, nullable=False, server_default="0"),
    Column("total_steps", Integer, nullable=False, server_default="0"),
    Column("epoch", Integer, nullable=False, server_default="0"),
    Column("samples_per_s", Float),
    Column("eta", Float),
    Column("best_val_acc", Float),
    Column("best_val_loss", Float),
    Column("best_epoch", Integer),
    Column("checkpoint", Text),
    Column("said", Text),                 # the message with its catalogue key (JSON)
    Column("step_delay", Float, nullable=False, server_default="0"),  # slow motion: the run's standing pace
    Column("submitter", Text, nullable=False, server_default=""),   # the queue
    Column("queue_order", Float),
    Column("waiter_pid", Integer),
    Column("slots", Integer, nullable=False, server_default="1"),
    Column("sweep", Text),                # sweeps
    Column("trial", Integer),
    Column("trial_seed", Integer),
    Column("executor", Text),             # runs on Dask workers
    Column("checkpoint_epoch", Integer),
    Column("params", Text),               # a tracked script's own settings (JSON; core/track.py)
    Column("tags", Text, nullable=False, server_default="[]"),  # the Runs page's tags (JSON list) and note
    Column("notes", Text, nullable=False, server_default=""),
    Index("runs_status", "status"),
    Index("runs_sweep", "sweep"),
)

steps = Table(
    "steps", metadata,
    Column("run_id", Text, nullable=False), Column("step", Integer, nullable=False),
    Column("epoch", Integer, nullable=False), Column("loss", Float), Column("elapsed", Float),
    PrimaryKeyConstraint("run_id", "step"),
)

epochs = Table(
    "epochs", metadata,
    Column("run_id", Text, nullable=False), Column("epoch", Integer, nullable=False),
    Column("train_loss", Float), Column("train_acc", Float), Column("val_loss", Float), Column("val_acc", Float),
    Column("epoch_seconds", Float), Column("samples_per_s", Float), Column("elapsed", Float),
    Column("val_confusion", Text),  # JSON [true][predicted] counts on the validation split (the time-lapse)
    PrimaryKeyConstraint("run_id", "epoch"),
)

logs = Table(
    "logs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Text, nullable=False), Column("t", Float, nullable=False), Column("message", Text, nullable=False),
    Index("logs_run", "run_id", "id"),
)

workers = Table(  # a data-parallel run's ranks
    "workers", metadata,
    Column("run_id", Text, nullable=False), Column("rank", Integer, nullable=False),
    Column("host", Text, nullable=False, server_default=""), Column("pid", Integer),
    Column("state", Text, nullable=False, server_default="starting"),
    Column("step", Integer, nullable=False, server_default="0"),
    Column("epoch", Integer, nullable=False, server_default="0"),
    Column("heartbeat", Float), Column("message", Text, nullable=False, server_default=""),
    Column("weights_sha256", Text), Column("said", Text),
    PrimaryKeyConstraint("run_id", "rank"),
)

validations = Table(
    "validations", metadata,
    Column("run_id", Text, nullable=False), Column("step", Integer, nullable=False),
    Column("epoch", Integer, nullable=False), Column("val_loss", Float), Column("val_acc", Float),
    PrimaryKeyConstraint("run_id", "step"),
)

setting_changes = Table(  # a live setting's new value, from its step on (core/live_settings.py)
    "setting_changes", metadata,
    Column("run_id", Text, nullable=False), Column("step", Integer, nullable=False),
    Column("setting", Text, nullable=False), Column("value", Float, nullable=False),
    Column("replayed", Integer, nullable=False, server_default="0"), Column("t", Float, nullable=False),
    PrimaryKeyConstraint("run_id", "step", "setting"),
)

requests = Table(  # what a run is asked while it trains, not yet taken by its worker (RunStore.ask / take)
    "requests", metadata,
    Column("run_id", Text, nullable=False), Column("setting", Text, nullable=False),
    Column("value", Float, nullable=False), Column("who", Text, nullable=False, server_default=""),
    Column("asked", Float, nullable=False),
    PrimaryKeyConstraint("run_id", "setting"),
)

history = Table(  # who did or tried what (core/runs/people/actions.py)
    "history", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("t", Float, nullable=False), Column("who", Text, nullable=False), Column("action", Text, nullable=False),
    Column("run_id", Text, nullable=False, server_default=""),
    Column("target", Text, nullable=False, server_default=""),
    Column("detail", Text, nullable=False, server_default=""),
    Column("allowed", Integer, nullable=False, server_default="1"),
)

people = Table(  # display names taken on a shared-password server, one browser each
    "people", metadata,
    Column("name", Text, primary_key=True),
    Column("token_sha256", Text, nullable=False),
    Column("created", Float, nullable=False),
    Column("folded", Text),  # the name NFKC-normalised and case-folded: "José" and "JOSÉ" are one name
    Index("people_folded", "folded", unique=True),
)

sweeps = Table(
    "sweeps", metadata,
    Column("id", Text, primary_key=True), Column("name", Text, nullable=False), Column("spec", Text, nullable=False),
    Column("submitter", Text, nullable=False, server_default=""), Column("created", Float, nullable=False),
    Column("status", Text, nullable=False, server_default="open"),
)

drawings = Table(  # a person's own handwriting (core/runs/people/handwriting.py)
    "drawings", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("image", LargeBinary, nullable=False), Column("label", Integer, nullable=False),
    Column("read_as", Integer), Column("run_id", Text), Column("created", Float, nullable=False),
    Column("owner", Text, nullable=False, server_default=""),
)

class_rounds = Table(  # a lesson's rounds of drawing on the class's phones (core/runs/people/class_round.py)
    "class_rounds", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("asked", Integer),  # the digit everyone is asked to draw; NULL: each student says which digit it is
    Column("run_id", Text, nullable=False),  # the model that reads the drawings
    Column("started_by", Text, nullable=False, server_default=""),
    Column("started", Float, nullable=False), Column("ended", Float),
    Column("finetune_run", Text),  # "Teach it our handwriting": the fine-tune run started in this round
    Column("held_out", Text),  # JSON list of the class drawings' ids that fine-tune left out, to compare on
)

class_drawings = Table(  # the class's drawings: lesson-only (wiped at End lesson or after 12 hours), never copied
    "class_drawings", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("round_id", Integer, nullable=False),
    Column("student", Text, nullable=False),  # the student's display name: nothing else of them is kept
    Column("image", LargeBinary, nullable=False), Column("label", Integer, nullable=False),
    Column("read_as", Integer), Column("hidden", Integer, nullable=False, server_default="0"),
    Column("created", Float, nullable=False),
    Index("class_drawings_round", "round_id"),
)

dispatcher = Table(  # the lease that lets one dispatcher act per store
    "dispatcher", metadata,
    Column("id", Integer, primary_key=True, autoincrement=False), Column("owner", Text, nullable=False),
    Column("expires", Float, nullable=False),
    CheckConstraint("id = 1", name="one_lease"),
)

layer_stats = Table(
    "layer_stats", metadata,
    Column("run_id", Text, nullable=False), Column("epoch", Integer, nullable=False),
    Column("param", Text, nullable=False), Column("kind", Text, nullable=False),
    Column("mean", Float), Column("std", Float), Column("min", Float), Column("max", Float), Column("norm", Float),
    Column("zeros", Float), Column("hist", Text, nullable=False),
    Column("position", Integer),  # the parameter's place in the network (the order they were recorded in)
    PrimaryKeyConstraint("run_id", "epoch", "param", "kind"),
)

artifacts = Table(  # a run's checkpoint files, where the database is a server (core/runs/store/artifacts.py)
    "artifacts", metadata,
    Column("run_id", Text, nullable=False), Column("name", Text, nullable=False),
    Column("content", LargeBinary, nullable=False), Column("size", Integer, nullable=False),
    Column("sha256", Text, nullable=False), Column("updated", Float, nullable=False),
    PrimaryKeyConstraint("run_id", "name"),
)

settings = Table(  # the server's own settings by name: its secret where the database is a server
    "settings", metadata,
    Column("name", Text, primary_key=True), Column("value", Text, nullable=False),
    Column("updated", Float, nullable=False),
)

# a run's records
RUN_TABLES = (steps, epochs, logs, layer_stats, workers, validations, setting_changes, requests, artifacts)
ALL_TABLES = tuple(metadata.sorted_tables)
