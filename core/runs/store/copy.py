"""Moving a whole store into another database: every table (runs, their records, the queue, sweeps, people,
history, drawings), the checkpoint files (into the target's database where it is a server, else its folder)
(the sweeps' Optuna studies: core/runs/sweep.copy_studies); then the counts of both sides compared, table by table.

    python -m core.cli.store copy --from runs/ --to postgresql+psycopg://studio@db-host/studio
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass

from sqlalchemy import func, insert, select, text

from core.messages import ExplainedValueError
from core.runs.store.artifacts import BEST, CHECKPOINT
from core.runs.store.run_store import RunStore
from core.runs.store.schema import ALL_TABLES, artifacts, class_drawings, class_rounds, runs, settings

# a store's own settings (its secret) stay its own: a copy makes its own secret, so no link of the source opens it;
# a lesson's class drawings are kept for the lesson only (core/runs/people/class_round.py), and never copied
COPIED_TABLES = tuple(t for t in ALL_TABLES if t not in (settings, class_rounds, class_drawings))

__all__ = ["CopyReport", "copy_store"]

BATCH = 2_000
SERIAL = ("logs", "history", "drawings")  # tables whose ids the database numbers


@dataclass(frozen=True)
class CopyReport:
    counts: dict[str, tuple[int, int]]  # table -> (rows in the source, rows in the target)
    files: int                          # checkpoint files copied

    @property
    def matches(self) -> bool:
        return all(a == b for a, b in self.counts.values())

    def lines(self) -> list[str]:
        out = [f"{name:<12} {a:>9,} -> {b:>9,}" + ("" if a == b else "   MISMATCH") for name, (a, b) in
               self.counts.items()]
        return out + [f"checkpoint files: {self.files}"]


def copy_store(source: RunStore, target: RunStore) -> CopyReport:
    """Copy everything of source into target, which must hold no runs yet."""
    if source.url == target.url:
        raise ExplainedValueError("copy_same_store", url=target.where)
    if target.list_runs():
        raise ExplainedValueError("copy_target_not_empty", url=target.where)
    _copy_tables(source, target)
    files = _copy_files(source, target)
    return CopyReport(_counts(source, target), files)


def _copy_tables(source: RunStore, target: RunStore) -> None:
    with source.db.read() as src, target.db.write(lock="queue") as dst:
        for table in COPIED_TABLES:
            if table is artifacts and not source.db.is_server:
                continue  # a SQLite store's files are in its folder (_copy_files)
            result = src.execute(select(table))
            while rows := result.mappings().fetchmany(BATCH):
                dst.execute(insert(table), [dict(r) for r in rows])
        if target.db.dialect == "postgresql":  # explicit ids were written: number on after them
            for name in SERIAL:
                dst.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                 f"COALESCE((SELECT MAX(id) FROM {name}), 0) + 1, false)"))


def _copy_files(source: RunStore, target: RunStore) -> int:
    """Each run's checkpoint files: from source's folder (or its database) into target's."""
    copied = 0
    with source.db.read() as conn:
        ids = conn.execute(select(runs.c.id)).scalars().all()
    for run_id in ids:
        for name in (CHECKPOINT, BEST):
            if source.db.is_server and target.db.is_server:
                continue  # the artifacts table came with the tables
            path = source.file(run_id, name)
            if path is None:
                continue
            dest = target.file_path(run_id, name)
            if dest.resolve() != path.resolve():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
            target.keep_file(run_id, name)
            copied += 1
    return copied


def _counts(source: RunStore, target: RunStore) -> dict[str, tuple[int, int]]:
    out = {}
    for table in COPIED_TABLES:
        if table is artifacts and not (source.db.is_server or target.db.is_server):
            continue
        with source.db.read() as a, target.db.read() as b:
            n_source = a.execute(select(func.count()).select_from(table)).scalar_one()
            n_target = b.execute(select(func.count()).select_from(table)).scalar_one()
        if table is artifacts and not source.db.is_server:
            n_source = sum(1 for r in source.list_runs() for name in (CHECKPOINT, BEST) if source.file(r.id, name))
        out[table.name] = (n_source, n_target)
    return out
