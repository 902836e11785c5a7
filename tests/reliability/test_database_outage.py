"""A team's PostgreSQL restarted mid-run (a real server, stopped and started again): the run's worker waits for
it and goes on, every step is recorded and the run completes; the app's pages say what is wrong, without a
traceback, while it is down and work again once it is back; the app does not take the silent worker for dead."""
from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.rows import StartPace
from core.runs.store import DatabaseError, RunStore
from tests.support.apptest import page
from tests.support.helpers import wait_for
from tests.support.postgres import started_postgres

OUTAGE_S = 20.0
STALE_S = 8.0  # the app's patience with a silent worker, shortened here so that the outage outlasts it


def _keep_the_database_down_until(deadline: float) -> None:
    """The outage itself: nothing to wait for, the database stays stopped until `deadline` (time.monotonic())."""
    time.sleep(max(0.0, deadline - time.monotonic()))


@pytest.fixture
def own_postgres():
    server = started_postgres()  # its own: the tests' shared server must not go down
    yield server
    server.stop()


def test_a_run_rides_out_a_database_restart_and_records_every_step(own_postgres, tmp_path, small_mnist,
                                                                    monkeypatch):
    url = own_postgres.new_database()
    monkeypatch.setenv("STUDIO_DATABASE_URL", url)
    monkeypatch.setenv("STUDIO_DATA_DIR", str(tmp_path / "store"))
    monkeypatch.setattr("core.runs.store.run_store.HEARTBEAT_STALE_S", STALE_S)
    store = RunStore(tmp_path / "store", url)
    config = TrainConfig(network="mlp", mode="pynative", epochs=3, batch_size=64, data_dir=str(small_mnist))
    run_id = launcher.start(store, config, pace=StartPace(step_delay=0.1))
    wait_for(lambda: store.get(run_id).step > 3, timeout=120, what="the first steps")
    own_postgres.halt()
    down_at = time.monotonic()
    try:
        with pytest.raises(DatabaseError, match="cannot reach|unreachable|connect"):
            store.list_runs()
        at = page("train")  # a person opens the studio meanwhile
        assert not at.exception, [e.value for e in at.exception]
        said = " ".join(e.value for e in at.error)
        assert "database" in said.lower() and "Traceback" not in said and str(tmp_path) not in said, said
        _keep_the_database_down_until(down_at + OUTAGE_S)
    finally:
        own_postgres.start_again()
    assert store.reconcile() == [], "the worker was silent because nobody could write: it is not dead"
    run = wait_for(lambda: (r := store.get(run_id)).status not in ("running", "starting", "queued") and r,
                   timeout=180, what="the run to end")
    assert run.status == "completed", (run.status, run.message, [line.message for line in store.logs(run_id)][-10:])
    recorded = store.steps(run_id)
    assert [s.step for s in recorded] == list(range(1, run.total_steps + 1)) and all(s.count == 1 for s in recorded), \
        "every step is recorded, none lost in the outage"
    at = page("train")
    assert not at.exception and not at.error, "the pages work again by themselves"


class _StopTheServerBefore:
    """A cursor event that stops the real server just before the first statement that starts with `prefix` is
    sent (the statement meets the connection the shutdown closed) and starts it again in a thread."""

    def __init__(self, server, prefix: str):
        self.server, self.prefix, self.restart = server, prefix, None

    def __call__(self, conn, cursor, statement, parameters, context, executemany):
        if self.restart is None and statement.lstrip().startswith(self.prefix):
            self.server.halt()
            self.restart = threading.Thread(target=self.server.start_again)
            self.restart.start()

    def done(self) -> None:
        if self.restart is not None:
            self.restart.join()


def _steps_with_the_server_stopped_under_them(store: RunStore, server, run_id: str, step: int) -> None:
    stop = _StopTheServerBefore(server, "INSERT INTO steps")
    event.listen(store.db.engine, "before_cursor_execute", stop)
    try:
        store.add_steps(run_id, [(step, 1, 0.5, 0.1 * step)], step=step)
    finally:
        event.remove(store.db.engine, "before_cursor_execute", stop)
        stop.done()
    assert stop.restart is not None, "the server was stopped under the statement"


def test_a_transaction_under_way_when_the_server_stops_is_made_again_once_it_is_back(own_postgres, tmp_path):
    store = RunStore(tmp_path / "store", own_postgres.new_database())
    run_id = store.create_run(TrainConfig(network="mlp", epochs=1), status="running")
    with pytest.raises(OperationalError, match="closed|terminat"):  # a page's store: the error at once, to say it
        _steps_with_the_server_stopped_under_them(store, own_postgres, run_id, step=1)
    assert store.steps(run_id) == [], "the transaction was rolled back"
    store.ride_out_outages(60.0)  # a training process's store
    _steps_with_the_server_stopped_under_them(store, own_postgres, run_id, step=1)
    assert [(s.step, s.count) for s in store.steps(run_id)] == [(1, 1)] and store.get(run_id).step == 1
    assert store.db.recovered_at is not None, "a heartbeat nobody could write meanwhile is not read as a dead worker"
    with pytest.raises(OperationalError, match="closed|terminat"), store.exclusive("sweeps"):
        _steps_with_the_server_stopped_under_them(store, own_postgres, run_id, step=2)  # the lock went with it
    assert [s.step for s in store.steps(run_id)] == [1], "nothing the lock guarded went on without it"
