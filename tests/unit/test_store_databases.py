"""The store on both databases: a store of the SQLite-only code migrated in place with nothing lost, copied into
PostgreSQL with its counts checked, checkpoints reachable from a host without the writer's folder, several
processes migrating one new database at once, and errors that say what to set."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np
import pytest

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.runs.people import permissions as people
from core.runs.people.handwriting import HandwritingSet
from core.runs.store import DatabaseError, RunStore
from core.runs.store.migrate import current_revision, head_revision
from core.training.events import SettingEvent

BOTH_DATABASES = True  # every test here that takes `store` runs on SQLite and on a real PostgreSQL
STORE_ON_DISK = True  # its SQLite is a file: what these tests are about

LEGACY = PROJECT_ROOT / "tests" / "support" / "fixtures" / "legacy-store"
LEGACY_RUN = "20261201-141011-fc6099"   # the completed MLP run the fixture's script wrote (make_legacy_store.py)
LEGACY_TABLES = ("runs", "steps", "epochs", "logs", "workers", "validations", "history", "people",
                 "sweeps", "drawings", "dispatcher", "layer_stats")


def legacy_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "legacy"
    shutil.copytree(LEGACY, folder)
    return folder


def raw_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in LEGACY_TABLES}


def check_legacy_contents(store: RunStore) -> None:
    """What tests/support/fixtures/make_legacy_store.py wrote, read through today's store."""
    run = store.get(LEGACY_RUN)
    assert (run.name, run.status, run.submitter, run.checkpoint_epoch, run.best_val_acc) == \
        ("legacy mlp", "completed", "ana", 2, 0.8)
    assert run.said.key == "stopped_at" and run.config.epochs == 2
    assert [s.step for s in store.steps(LEGACY_RUN)] == list(range(1, 11))
    assert [e.val_acc for e in store.epochs(LEGACY_RUN)] == [pytest.approx(0.7), pytest.approx(0.8)]
    assert [(s.param, s.kind) for s in store.layer_stats(LEGACY_RUN)] == [("fc1.weight", "weight"),
                                                                          ("fc1.weight", "grad")]
    assert store.validations(LEGACY_RUN)[0].val_acc == 0.7 and store.setting_changes(LEGACY_RUN) == [
        SettingEvent(6, "learning_rate", 0.05)]
    assert store.ranks(LEGACY_RUN)[0].said.key == "rank_ended_died"
    assert [line.message for line in store.logs(LEGACY_RUN)] == ["legacy log line"]
    assert [(h.who, h.action, h.allowed) for h in store.history()] == [("bob", "pause", False), ("ana", "start", True)]
    assert [r.name for r in store.list_runs()] == ["legacy front", "legacy queued", "legacy mlp"]
    assert [w.run.name for w in __import__("core.runs.run_queue", fromlist=["RunQueue"]).RunQueue(store, 1).waiting()] \
        == ["legacy front", "legacy queued"], "the queue's order (moved to the front first) kept"
    assert store.sweep("sweep-legacy").status == "done" and store.lease_holder()[0] == "legacy-dispatcher"
    (drawing,) = HandwritingSet(store, "ana").drawings()
    assert drawing.label == 7 and drawing.image.shape == (28, 28)
    assert np.array_equal(drawing.image, np.random.default_rng(0).integers(0, 255, (28, 28), dtype=np.uint8))
    assert people.claim_name(store, "José", "token-of-jose") is None, "the name's browser keeps it"
    assert people.claim_name(store, "JOSÉ", "another browser").key == "name_taken", "in any case, not only ASCII"
    assert store.file(LEGACY_RUN).read_bytes() == b"not a real checkpoint, bytes kept as they are"


def test_a_store_of_the_sqlite_only_code_opens_migrated_with_nothing_lost(tmp_path, monkeypatch):
    monkeypatch.delenv("STUDIO_DATABASE_URL", raising=False)
    folder = legacy_copy(tmp_path)
    before = raw_counts(folder / "runs.sqlite")
    store = RunStore(folder)
    assert current_revision(store.db) == head_revision()
    assert raw_counts(folder / "runs.sqlite") == before, "every row kept"
    check_legacy_contents(store)
    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)  # and it goes on working
    store.log(run_id, "new line")
    assert store.logs(run_id)[0].message == "new line"


def test_a_legacy_store_copied_into_postgresql_has_every_row_and_file(tmp_path, postgres_server, monkeypatch):
    monkeypatch.delenv("STUDIO_DATABASE_URL", raising=False)
    folder, url = legacy_copy(tmp_path), postgres_server.new_database()
    out = subprocess.run([sys.executable, "-m", "core.cli.store", "copy", "--from", str(folder), "--to", url],
                         cwd=PROJECT_ROOT, env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    counts = raw_counts(folder / "runs.sqlite")
    for table, n in counts.items():  # the command's own check, as it printed it
        assert f"{table:<12} {n:>9,} -> {n:>9,}" in out.stdout, out.stdout
    assert "checkpoint files: 1" in out.stdout and "MISMATCH" not in out.stdout
    elsewhere = RunStore(tmp_path / "another-host", url)  # a host without the legacy folder
    check_legacy_contents(elsewhere)
    assert elsewhere.file(LEGACY_RUN).parent.parent.parent == tmp_path / "another-host", \
        "the checkpoint came from the database, not the source folder"
    elsewhere.log(LEGACY_RUN, "after the copy")  # ids number on after the copied ones
    assert [line.message for line in elsewhere.logs(LEGACY_RUN)] == ["legacy log line", "after the copy"]
    again = subprocess.run([sys.executable, "-m", "core.cli.store", "copy", "--from", str(folder), "--to", url],
                           cwd=PROJECT_ROOT, env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 1 and "already holds runs" in again.stderr


def test_a_checkpoint_written_on_one_host_is_read_on_another(store, tmp_path):
    """A team's database keeps the checkpoint for every host; a SQLite store keeps it in its own folder only."""
    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)
    path = store.checkpoint_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"weights v1")
    store.keep_file(run_id, "model.ckpt")
    store.update(run_id, checkpoint=str(path))
    store.finish(run_id, "stopped")
    other = RunStore(tmp_path / "other-host", store.url)
    if store.db.is_server:
        assert other.file(run_id).read_bytes() == b"weights v1" and other.file(run_id) != path
        assert other.resumable(other.get(run_id)) is None, "resumable from any host"
        path.write_bytes(b"weights v2, longer")
        store.keep_file(run_id, "model.ckpt")
        assert other.file(run_id).read_bytes() == b"weights v2, longer", "a stale local copy is fetched again"
    else:
        assert other.file(run_id) is None and store.file(run_id) == path
    store.delete(run_id)
    assert not store.has_file(run_id) and not other.has_file(run_id)


class Killed(BaseException):
    """The writing process dies here (its open transaction is never committed)."""


def test_a_writer_killed_while_keeping_a_checkpoint_leaves_file_and_epoch_of_one_moment(
        postgres_server, tmp_path, monkeypatch):
    """A worker killed while it keeps epoch 2's checkpoint in a team's database: whichever write it dies in,
    another host reads the checkpoint of the epoch the run's row says (a resume drops the epochs after the
    row's, so a newer file with an older row lost an epoch on resume)."""
    from core.model import checkpoint
    from core.model.network_build import build_network
    from core.runs.worker.checkpoints import CheckpointWriter
    url = postgres_server.new_database()
    config = TrainConfig(network="mlp", hidden=(8,), early_stopping=True)
    net = build_network("mlp", hidden=(8,))
    for dies_at in (1, 2, 3):
        writer_store = RunStore(tmp_path / f"worker-{dies_at}", url)
        run_id = writer_store.create_run(config, exclusive=False)
        writer = CheckpointWriter(writer_store, run_id, config)
        writer.save(net, 1, 10, best=True)
        real_write, writes = writer_store.db.write, []

        @contextmanager
        def dying_write(*args, real_write=real_write, writes=writes, dies_at=dies_at, **kwargs):
            writes.append(1)
            with real_write(*args, **kwargs) as conn:
                yield conn
                if len(writes) == dies_at:
                    raise Killed
        monkeypatch.setattr(writer_store.db, "write", dying_write)
        with suppress(Killed):  # no kill when the save takes fewer writes
            writer.save(net, 2, 20, best=True)
        monkeypatch.undo()
        other = RunStore(tmp_path / f"other-host-{dies_at}", url)
        said = other.get(run_id).checkpoint_epoch
        for name in ("model.ckpt", "best.ckpt"):
            kept = checkpoint.load(other.file(run_id, name)).meta["epoch"]
            assert kept == said, f"killed at write {dies_at} of {len(writes)}: {name} of epoch {kept}, row {said}"


def test_four_processes_opening_one_new_database_at_once_migrate_it_once(store, tmp_path, request):
    url = (request.getfixturevalue("postgres_server").new_database() if store.db.is_server
           else f"sqlite:///{tmp_path / 'fresh.sqlite'}")
    code = ("import sys; from core.runs.store import RunStore; from core.config import TrainConfig; "
            "s = RunStore(sys.argv[1], sys.argv[2]); s.create_run(TrainConfig(), exclusive=False)")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / f"h{i}"), url], cwd=PROJECT_ROOT,
                              env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    opened = RunStore(tmp_path / "h0", url)
    assert len(opened.list_runs()) == 4 and current_revision(opened.db) == head_revision()


def test_a_database_that_cannot_be_used_gets_a_message_that_says_what_to_set(tmp_path):
    with pytest.raises(DatabaseError) as e:
        RunStore(tmp_path, "postgresql+psycopg://studio@127.0.0.1:1/studio")
    assert "Cannot reach the run store's database postgresql+psycopg://studio@127.0.0.1:1/studio" in str(e.value)
    assert "STUDIO_DATABASE_URL" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        RunStore(tmp_path, "not a url")
    assert "is not a database URL" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        RunStore(tmp_path, "mysql://studio:secret@db/studio")
    assert "secret" not in str(e.value), "a password is never shown"


def test_the_best_validation_figures_count_every_validation_between_epochs_too(store):
    """A run that validates every few steps shows its best accuracy as soon as the first validation says it,
    not only at the epoch's end; the best epoch stays the one with the lowest validation loss."""
    from core.runs.worker.recording import StoreRecorder
    from core.training.events import EpochMetrics, ValidationEvent

    run_id = store.create_run(TrainConfig(network="mlp"), exclusive=False)
    recorder = StoreRecorder(store, run_id)
    recorder.on_validation(ValidationEvent(step=20, epoch=1, val_loss=0.9, val_acc=0.74))
    assert (store.get(run_id).best_val_acc, store.get(run_id).best_val_loss) == (0.74, 0.9)
    recorder.on_validation(ValidationEvent(step=40, epoch=1, val_loss=0.7, val_acc=0.71))
    recorder.on_epoch(EpochMetrics(epoch=1, train_loss=1.0, train_acc=0.6, val_loss=0.8, val_acc=0.72, best=True))
    run = store.get(run_id)
    assert (run.best_val_acc, run.best_val_loss, run.best_epoch) == (0.74, 0.7, 1)
    resumed = StoreRecorder(store, run_id)  # a resumed run goes on from the best so far
    resumed.on_validation(ValidationEvent(step=60, epoch=2, val_loss=0.75, val_acc=0.73))
    assert (store.get(run_id).best_val_acc, store.get(run_id).best_val_loss) == (0.74, 0.7)


def _database_at(url: str | None, folder: Path, revision: str) -> str:
    """A store's database migrated only as far as revision (as an older studio left it); its URL."""
    from alembic import command
    from alembic.config import Config

    from core.runs.store.database import Database
    from core.runs.store.migrate import MIGRATIONS, VERSION_TABLE
    folder.mkdir(parents=True, exist_ok=True)
    db = Database(url or f"sqlite:///{folder / 'runs.sqlite'}", lock_dir=folder)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["version_table"] = VERSION_TABLE
    with db.write(lock="migrate") as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
    return db.url


def test_an_older_schema_migrates_itself_on_sqlite_and_waits_for_an_upgrade_on_a_shared_database(tmp_path, database):
    """A personal SQLite store moves to this code's schema when opened; a team's PostgreSQL is refused, saying
    the command, until one person upgrades it on purpose; then every host opens it."""
    folder = tmp_path / "older"
    _database_at(database, folder, "0005")
    if database is None:
        assert RunStore(folder).schema_revision == head_revision()
        return
    with pytest.raises(DatabaseError) as refused:
        RunStore(folder, database)
    said = str(refused.value)
    assert "schema 0005" in said and head_revision() in said and "python -m core.cli.store upgrade" in said
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    out = subprocess.run([sys.executable, "-m", "core.cli.store", "upgrade", "--store", str(folder),
                          "--database-url", database], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"schema {head_revision()}" in out.stdout
    assert RunStore(folder, database).schema_revision == head_revision()


def test_a_schema_newer_than_the_code_is_refused_on_every_database(store):
    """A database another host's newer studio upgraded: this code says so and writes nothing to it."""
    from sqlalchemy import text

    from core.runs.store.migrate import VERSION_TABLE
    with store.db.write() as conn:
        conn.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '0099_from_the_future'"))
    url = [] if store.db_path else ["--database-url", store.url]
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    for command in ("upgrade", "rotate-secret"):  # a process that opens the store, on purpose to upgrade or not
        out = subprocess.run([sys.executable, "-m", "core.cli.store", command, "--store", str(store.root), *url],
                             cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "0099_from_the_future" in out.stderr and "newer studio" in out.stderr, out
    assert store.schema_revision == "0099_from_the_future"  # untouched


def test_a_store_at_the_newest_migration_opens_without_alembic_while_each_migration_is_named_by_its_number(
        tmp_path, database):
    """core/runs/store/migrate.py opens a store at the newest migration without importing Alembic (~0.15 s of
    each process's start): it takes the newest migration file's number for the head. That holds while every
    migration file is named by its revision, one after the other, as Alembic's own chain has them."""
    from alembic.script import ScriptDirectory

    from core.runs.store.migrate import MIGRATIONS, _config, newest_file_revision
    chain = list(reversed(list(ScriptDirectory.from_config(_config()).walk_revisions())))  # the first one first
    numbers = sorted(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))
    assert [script.revision for script in chain] == numbers
    assert [script.down_revision for script in chain] == [None, *numbers[:-1]]
    assert newest_file_revision() == head_revision() == numbers[-1]
    folder = tmp_path / "store"
    RunStore(folder, database)  # a new database: migrated here, by Alembic
    opened = subprocess.run(
        [sys.executable, "-c", "import sys; from core.runs.store import RunStore; "
                               "print(RunStore(sys.argv[1]).schema_revision, 'alembic' in sys.modules)", str(folder)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.split() == [head_revision(), "False"]
