import subprocess
import sys
import threading

import pytest

from core.config import ConfigError, TrainConfig
from core.runs.store import RunBusy, RunStore
from core.training.events import EpochMetrics
from tests.support.helpers import cli

BOTH_DATABASES = True  # every test here runs on SQLite and on a real PostgreSQL (tests/conftest.py)


def test_runs_persist_across_store_instances(store):
    run_id = store.create_run(TrainConfig(network="mlp"), name="first")
    store.add_steps(run_id, [(1, 1, 2.3, 0.1), (2, 1, 2.1, 0.2)], step=2, total_steps=10, epoch=1)
    store.add_epoch(run_id, EpochMetrics(epoch=1, train_loss=2.0, train_acc=0.3, val_loss=1.9, val_acc=0.4))
    store.log(run_id, "hello")
    again = RunStore(store.root)
    run = again.get(run_id)
    assert run.name == "first" and run.config.network == "mlp" and run.step == 2 and run.heartbeat
    assert [s.loss for s in again.steps(run_id)] == [2.3, 2.1]
    assert again.epochs(run_id)[0].val_acc == 0.4 and again.logs(run_id)[0].message == "hello"


def test_only_one_run_trains_at_a_time_even_when_started_together(store):
    results = []
    barrier = threading.Barrier(4)

    def start():
        barrier.wait()
        try:
            results.append(store.create_run(TrainConfig()))
        except RunBusy as e:
            results.append(e)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if isinstance(r, str)]
    assert len(winners) == 1
    assert all("already training" in str(r) for r in results if isinstance(r, RunBusy))


def test_requests_and_their_answers(store):
    run_id = store.create_run(TrainConfig())
    assert str(store.request(run_id, "pause")) == "Pause requested." and store.get(run_id).request == "pause"
    assert str(store.request(run_id, "resume")) == "Resume requested." and store.get(run_id).request == "run"
    assert str(store.request(run_id, "stop")) == "Stop requested."
    assert "already requested" in str(store.request(run_id, "stop"))
    # a Pause, Resume or Step from a page that still showed the run paused does not take the Stop back
    assert "already requested" in str(store.request(run_id, "pause"))
    assert "already requested" in str(store.request(run_id, "resume"))
    assert str(store.ask(run_id, "step", 5)) == "Step requested."
    assert store.get(run_id).request == "stop"
    store.finish(run_id, "stopped")
    assert "already finished (stopped)" in str(store.request(run_id, "pause"))


def test_a_run_whose_process_died_is_marked_interrupted(store):
    run_id = store.create_run(TrainConfig())
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    store.update(run_id, status="running", pid=proc.pid, heartbeat=__import__("time").time())
    assert store.active_run() is None
    run = store.get(run_id)
    assert run.status == "interrupted" and "ended unexpectedly" in run.message


def test_invalid_config_never_reaches_the_store(store):
    with pytest.raises(ConfigError) as e:
        store.create_run(TrainConfig(learning_rate=float("nan"), batch_size=0))
    assert set(e.value.errors) == {"learning_rate", "batch_size"}
    assert store.list_runs() == []


def test_step_history_is_downsampled(store):
    run_id = store.create_run(TrainConfig(), exclusive=False)
    store.add_steps(run_id, [(i, 1, 1.0 / i, i * 0.01) for i in range(1, 10001)])
    rows = store.steps(run_id, max_points=500)
    assert len(rows) == 500 and rows[0].step == 20 and rows[-1].step == 10000
    assert all(r.count == 20 for r in rows)  # every step counted once, in equal buckets
    first = [1.0 / i for i in range(1, 21)]
    assert rows[0].loss == pytest.approx(sum(first) / 20)
    assert (rows[0].loss_min, rows[0].loss_max) == (pytest.approx(min(first)), pytest.approx(max(first)))
    assert [r.step for r in store.steps(run_id, max_points=20_000)] == list(range(1, 10001))


def test_delete_removes_everything_but_not_an_active_run(store):
    run_id = store.create_run(TrainConfig())
    with pytest.raises(RunBusy):
        store.delete(run_id)
    store.checkpoint_path(run_id).parent.mkdir(parents=True)
    store.checkpoint_path(run_id).write_bytes(b"x")
    store.finish(run_id, "completed")
    store.delete(run_id)
    assert store.get(run_id) is None and not store.checkpoint_path(run_id).parent.exists()


def test_messages_keep_their_catalogue_key_and_an_old_store_gains_the_column(tmp_path):
    """A run's outcome and a rank's message are stored in English with their key (pages say them in the
    user's language); a store made before keys existed is upgraded when opened, its rows kept."""
    import sqlite3

    from core.messages import Message
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "runs.sqlite") as db:  # the runs and workers tables as they were before
        db.executescript("""
            CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT NOT NULL, source TEXT NOT NULL, config TEXT NOT NULL,
              status TEXT NOT NULL, message TEXT NOT NULL DEFAULT '', request TEXT NOT NULL DEFAULT 'run',
              created REAL NOT NULL, started REAL, finished REAL, heartbeat REAL, pid INTEGER,
              phase TEXT NOT NULL DEFAULT '', step INTEGER NOT NULL DEFAULT 0, total_steps INTEGER NOT NULL DEFAULT 0,
              epoch INTEGER NOT NULL DEFAULT 0, samples_per_s REAL, eta REAL, best_val_acc REAL, best_val_loss REAL,
              best_epoch INTEGER, checkpoint TEXT);
            CREATE TABLE workers (run_id TEXT NOT NULL, rank INTEGER NOT NULL, host TEXT NOT NULL DEFAULT '',
              pid INTEGER, state TEXT NOT NULL DEFAULT 'starting', step INTEGER NOT NULL DEFAULT 0,
              epoch INTEGER NOT NULL DEFAULT 0, heartbeat REAL, message TEXT NOT NULL DEFAULT '',
              weights_sha256 TEXT, PRIMARY KEY (run_id, rank));
            INSERT INTO runs (id, name, source, config, status, message, created)
              VALUES ('20261129-100000-abcdef', 'kept', 'cli', '{}', 'completed', 'finished 3 epochs', 1.0);""")
    store = RunStore(old)
    kept = store.get("20261129-100000-abcdef")
    assert (kept.name, kept.message, kept.said) == ("kept", "finished 3 epochs", None)
    run_id = store.create_run(TrainConfig(network="mlp"), source="cli")
    store.finish(run_id, "stopped", Message("stopped_at", {"step": 6}))
    run = store.get(run_id)
    assert run.message == "stopped by request at step 6" and run.said.say("zh") == "应请求在第 6 步停止"
    store.set_rank(run_id, 1, state="stopped", message=Message("rank_ended_died", {"rank": 0}))
    (rank,) = store.ranks(run_id)
    assert rank.message == "ended because rank 0 died" and rank.said.say("zh") == "因 rank 0 意外终止而结束"


def test_a_run_silent_for_sixty_seconds_is_marked_interrupted_though_its_process_lives(store):
    """docs/architecture.md: a run with no heartbeat for 60 s is marked interrupted (a hung worker), even when its process
    is still there; one heard from 59 s ago is not."""
    import time
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        quiet, silent = (store.create_run(TrainConfig(), name=n, exclusive=False) for n in ("quiet", "silent"))
        store.update(quiet, status="running", pid=sleeper.pid, heartbeat=time.time() - 59)
        store.update(silent, status="running", pid=sleeper.pid, heartbeat=time.time() - 61)
        assert store.reconcile() == [silent]
        assert store.get(quiet).status == "running"
        run = store.get(silent)
        assert run.status == "interrupted" and "ended unexpectedly" in run.message
        assert sleeper.poll() is None  # judged by its silence, not by its process
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_worker_that_records_its_stop_and_exits_while_reconcile_looks_stays_stopped(store, monkeypatch):
    """The store tells the truth when a Stop and a page's reconcile meet: reconcile reads the running run, the worker
    then records "stopped" and exits, and only then is its process found gone. The run stays stopped, with the
    worker's own message, and reconcile does not count it as one it interrupted."""
    import time

    import core.runs.store.run_store as run_store
    from core.messages import Message
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    run_id = store.create_run(TrainConfig(), name="stopped while looked at")
    store.update(run_id, status="running", pid=ended.pid, heartbeat=time.time())

    def worker_stops_then_exits(pid: int) -> bool:  # what happens between reconcile's read and its check
        store.finish(run_id, "stopped", Message("stopped_at", {"step": 6}))
        return False

    monkeypatch.setattr(run_store, "pid_alive", worker_stops_then_exits)
    assert store.reconcile() == []
    run = store.get(run_id)
    assert (run.status, run.message) == ("stopped", "stopped by request at step 6")
    assert not any("marked interrupted" in line.message for line in store.logs(run_id))


def test_stop_terminates_a_worker_stuck_mid_step_after_the_grace_period(store):
    """docs/architecture.md: Stop asks between steps; a worker that does not end within 5 s (stuck inside a step) is
    terminated, and the run says so. The stand-in worker never reads the store, like one stuck in a step."""
    import time

    from core.runs.launch import launcher
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        run_id = store.create_run(TrainConfig(), name="stuck")
        store.update(run_id, status="running", pid=stuck.pid, heartbeat=time.time())
        asked = time.monotonic()
        launcher.stop(store, run_id)
        assert stuck.poll() is None and store.get(run_id).active  # asked, not yet forced
        stuck.wait(timeout=launcher.STOP_GRACE_S + 10)
        waited = time.monotonic() - asked
        assert waited >= launcher.STOP_GRACE_S - 0.5  # the grace period was given
        run = store.get(run_id)
        deadline = time.monotonic() + 5
        while run.active and time.monotonic() < deadline:
            time.sleep(0.1)
            run = store.get(run_id)
        assert run.status == "stopped" and "terminated mid-step" in run.message
    finally:
        if stuck.poll() is None:
            stuck.kill()
        stuck.wait()


def test_a_database_file_deleted_or_corrupted_while_the_studio_runs_is_said_on_every_page(tmp_path, monkeypatch):
    """SQLite's file (a server's database is the server's to keep): not a traceback, and never a silently empty
    store: the page says what happened and what to do."""
    from core.runs.store import DatabaseError
    from tests.support.apptest import page
    monkeypatch.delenv("STUDIO_DATABASE_URL", raising=False)
    monkeypatch.setenv("STUDIO_DATA_DIR", str(tmp_path / "store"))
    store = RunStore(tmp_path / "store")
    store.create_run(TrainConfig(network="mlp"), name="kept", exclusive=False)
    at = page("runs")
    assert not at.exception
    store.db_path.rename(tmp_path / "moved-away.sqlite")
    with pytest.raises(DatabaseError) as e:
        store.list_runs()
    assert "was deleted or replaced while the studio ran" in str(e.value)
    for name in ("runs", "train", "configure"):
        at = page(name)
        assert not at.exception, [x.value for x in at.exception]
        assert any("deleted or replaced" in x.value for x in at.error), name
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "runs.sqlite").write_bytes(b"this is not a database" * 100)  # found so at a start
    p = cli("core.cli.control", "pause", "20261201-000000-abcdef", "--store", str(tmp_path / "broken"))
    assert p.returncode != 0 and "cannot be read any more (file is not a database)" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
