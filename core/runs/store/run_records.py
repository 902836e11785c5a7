"""A run's records as plain columns and values, read from one store and written into another: what the relay of
a run trained on a Dask worker carries (core/runs/worker/mirror.py). A part of RunStore.

Rows are found "since the last look" by SQLite's rowid, which INSERT OR REPLACE renews for a changed row: the
store being read is the remote machine's scratch store, always SQLite. The store written may be either."""
from __future__ import annotations

from sqlalchemy import ColumnElement, Integer, Table, func, insert, literal_column, select, update

from core.runs.store.database import Database
from core.runs.store.schema import metadata, runs

__all__ = ["RunRecords", "RecordBlock"]

RecordBlock = dict  # {"columns": [...], "values": [[...], ...]}: plain, so that Dask can carry it


def _table(name: str) -> Table:
    return metadata.tables[name]


def _columns(table: Table) -> list[str]:
    """Every column but a log line's own id (each store numbers its lines)."""
    return [c.name for c in table.columns if not (table.name == "logs" and c.name == "id")]


def _keys(table: Table) -> tuple[str, ...]:
    return tuple(c.name for c in table.primary_key.columns)


class RunRecords:
    db: Database

    def run_row(self, run_id: str, fields: tuple[str, ...] | None = None) -> dict | None:
        """The run's row as stored (JSON text for its config and message), or only `fields` of it."""
        columns = [runs.c[f] for f in fields] if fields else [runs]
        with self.db.read() as conn:
            row = conn.execute(select(*columns).where(runs.c.id == run_id)).mappings().first()
        return dict(row) if row else None

    def last_rowids(self, run_id: str, tables: tuple[str, ...]) -> dict[str, int]:
        """The last rowid of each table's rows of the run (SQLite stores only)."""
        assert self.db.dialect == "sqlite", "rowids are SQLite's"
        out: dict[str, int] = {}
        with self.db.read() as conn:
            for name in tables:
                table = _table(name)
                out[name] = conn.execute(select(func.coalesce(func.max(literal_column("rowid")), 0))
                                         .select_from(table).where(table.c.run_id == run_id)).scalar_one()
        return out

    def rows_since(self, run_id: str, name: str, after: int) -> tuple[RecordBlock, int]:
        """The run's rows of one table written or replaced after rowid `after`, and the last rowid now (SQLite)."""
        assert self.db.dialect == "sqlite", "rowids are SQLite's"
        table = _table(name)
        rowid: ColumnElement[int] = literal_column("rowid", Integer)
        columns = _columns(table)
        with self.db.read() as conn:
            rows = conn.execute(select(rowid, *[table.c[c] for c in columns])
                                .where(table.c.run_id == run_id, rowid > after).order_by(rowid)).all()
        last = rows[-1][0] if rows else after
        return {"columns": columns, "values": [list(r[1:]) for r in rows]}, last

    def run_records(self, run_id: str, name: str) -> RecordBlock:
        """Every row of one table of the run, in key order (either database)."""
        table = _table(name)
        columns = _columns(table)
        order = [table.c.id] if name == "logs" else [table.c[k] for k in _keys(table)]
        with self.db.read() as conn:
            rows = conn.execute(select(*[table.c[c] for c in columns]).where(table.c.run_id == run_id)
                                .order_by(*order)).all()
        return {"columns": columns, "values": [list(r) for r in rows]}

    def put_records(self, run_id: str, blocks: dict[str, RecordBlock], run_fields: dict | None = None) -> None:
        """Write blocks of the run's rows (replacing rows with the same keys; columns this schema lacks are left
        out) and update its row with run_fields, in one transaction."""
        with self.db.write() as conn:
            for name, block in blocks.items():
                table = _table(name)
                known = [i for i, c in enumerate(block["columns"]) if c in table.c]
                rows = [{block["columns"][i]: (run_id if block["columns"][i] == "run_id" else v[i]) for i in known}
                        for v in block["values"]]
                if not rows:
                    continue
                if name == "logs":  # appended: each store numbers its own lines
                    conn.execute(insert(table), rows)
                else:
                    conn.execute(self.db.upsert(table, _keys(table)), rows)
            if run_fields:
                conn.execute(update(runs).where(runs.c.id == run_id).values(**run_fields))

    def insert_run_row(self, row: dict) -> None:
        """A run's row as another store had it (a remote machine's scratch store plants the run it trains)."""
        with self.db.write() as conn:
            conn.execute(insert(runs).values(**{k: v for k, v in row.items() if k in runs.c}))
