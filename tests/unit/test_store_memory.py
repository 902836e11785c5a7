"""The in-memory store (RunStore.in_memory) that unit tests use: the schema Alembic gives a file, its rows seen by
every RunStore of its URL in the process and by no other store, gone when closed, and never handed to a child."""
from __future__ import annotations

import pytest
from sqlalchemy import inspect

from core.config import TrainConfig
from core.runs.store import RunStore
from core.runs.store.migrate import head_revision


def _schema(store: RunStore) -> dict[str, list[str]]:
    found = inspect(store.db.engine)
    return {table: sorted(c["name"] for c in found.get_columns(table)) for table in found.get_table_names()}


def test_an_in_memory_store_has_the_schema_alembic_gives_a_file(tmp_path):
    on_disk, first, second = (RunStore(tmp_path / "disk"), RunStore.in_memory(tmp_path / "a"),
                              RunStore.in_memory(tmp_path / "b"))
    try:
        assert first.schema_revision == second.schema_revision == head_revision()
        assert _schema(first) == _schema(second) == _schema(on_disk)
        assert first.db_path is None and first.url != second.url and "mode=memory" in first.url
    finally:
        first.close(), second.close()


def test_its_runs_are_seen_through_its_url_in_this_process_only_and_gone_when_closed(tmp_path):
    store, other = RunStore.in_memory(tmp_path / "a"), RunStore.in_memory(tmp_path / "b")
    run_id = store.create_run(TrainConfig(network="mlp"), name="kept in memory", status="queued")
    store.add_steps(run_id, [(1, 0, 0.9, 0.5), (2, 0, 0.8, 0.6)])
    again = RunStore(tmp_path / "a", store.url)
    assert again.get(run_id).name == "kept in memory" and [s.step for s in again.steps(run_id)] == [1, 2]
    assert other.list_runs() == []
    assert not (tmp_path / "a" / "runs.sqlite").exists()
    store.close()
    reopened = RunStore(tmp_path / "a", store.url)
    assert reopened.list_runs() == [], "a closed in-memory store is gone"
    reopened.close(), other.close()


def test_a_child_process_is_never_given_an_in_memory_store(tmp_path):
    store = RunStore.in_memory(tmp_path / "a")
    try:
        with pytest.raises(RuntimeError, match="in-memory store"):
            store.command_env()
        with pytest.raises(RuntimeError, match="in-memory store"):
            store.command_args()
    finally:
        store.close()
