"""The records a team shares besides runs: the history of actions, display names, drawings and sweeps.
A part of RunStore; the rules about them live in core/runs/people/actions.py, people.py, handwriting.py, sweep.py."""
from __future__ import annotations

import time
import unicodedata

from sqlalchemy import delete, func, insert, select, update

from core.messages import ExplainedValueError
from core.runs.rows import DrawingRow, HistoryLine, Run, SweepRow
from core.runs.store.convert import to_run
from core.runs.store.database import Database
from core.runs.store.schema import drawings, history, people, runs, sweeps

__all__ = ["TeamRecords", "fold_name"]


def fold_name(name: str) -> str:
    """One key for the ways of writing a name: NFKC-normalised (full-width letters are letters), case-folded in
    every script (JOSÉ is José, STRASSE is Straße), normalised again (folding can undo the first)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name.strip()).casefold())


class TeamRecords:
    db: Database

    # --- history ---------------------------------------------------------------------------------------------
    def record_action(self, line: HistoryLine) -> None:
        with self.db.write() as conn:
            conn.execute(insert(history).values(t=line.t, who=line.who, action=line.action, run_id=line.run_id,
                                                target=line.target, detail=line.detail, allowed=int(line.allowed)))

    def history(self, limit: int = 500) -> list[HistoryLine]:
        """The newest actions first."""
        with self.db.read() as conn:
            rows = conn.execute(select(history.c.t, history.c.who, history.c.action, history.c.run_id,
                                       history.c.target, history.c.detail, history.c.allowed)
                                .order_by(history.c.id.desc()).limit(limit)).mappings().all()
        return [HistoryLine(**{**r, "allowed": bool(r["allowed"])}) for r in rows]

    # --- display names ---------------------------------------------------------------------------------------
    def claim_name(self, name: str, token_sha256: str) -> bool:
        """Take `name` for the browser whose token hashes to token_sha256; False when another browser holds it
        (in any case or Unicode form)."""
        key = fold_name(name)
        with self.db.write(lock="people") as conn:
            held = conn.execute(select(people.c.token_sha256).where(people.c.folded == key)).scalar()
            if held is None:
                conn.execute(insert(people).values(name=name, token_sha256=token_sha256, created=time.time(),
                                                   folded=key))
                return True
            return held == token_sha256

    # --- drawings --------------------------------------------------------------------------------------------
    def add_drawing(self, owner: str, image: bytes, label: int, read_as: int | None, run_id: str | None,
                    most: int) -> int:
        """Keep one drawing of owner's (ExplainedValueError when owner already has `most`); its id."""
        with self.db.write(lock="drawings") as conn:
            count = conn.execute(select(func.count()).select_from(drawings).where(drawings.c.owner == owner)
                                 ).scalar_one()
            if count >= most:
                raise ExplainedValueError("too_many_drawings", most=most)
            return int(conn.execute(insert(drawings).values(image=image, label=label, read_as=read_as, run_id=run_id,
                                                            created=time.time(), owner=owner)
                                    .returning(drawings.c.id)).scalar_one())

    def drawings(self, owner: str) -> list[DrawingRow]:
        """owner's drawings, oldest first."""
        with self.db.read() as conn:
            rows = conn.execute(select(drawings).where(drawings.c.owner == owner).order_by(drawings.c.id)).mappings()
            return [DrawingRow(**r) for r in rows]

    def delete_drawing(self, owner: str, drawing_id: int) -> None:
        with self.db.write() as conn:
            conn.execute(delete(drawings).where(drawings.c.id == drawing_id, drawings.c.owner == owner))

    # --- sweeps ----------------------------------------------------------------------------------------------
    def add_sweep(self, row: SweepRow) -> None:
        with self.db.write() as conn:
            conn.execute(insert(sweeps).values(id=row.id, name=row.name, spec=row.spec, submitter=row.submitter,
                                               created=row.created, status=row.status))

    def sweeps(self, status: str | None = None) -> list[SweepRow]:
        """Every sweep (or those with this status), newest first."""
        query = select(sweeps).order_by(sweeps.c.created.desc())
        if status is not None:
            query = query.where(sweeps.c.status == status)
        with self.db.read() as conn:
            return [SweepRow(**r) for r in conn.execute(query).mappings()]

    def sweep(self, sweep_id: str) -> SweepRow | None:
        with self.db.read() as conn:
            row = conn.execute(select(sweeps).where(sweeps.c.id == sweep_id)).mappings().first()
        return SweepRow(**row) if row else None

    def set_sweep_status(self, sweep_id: str, status: str) -> None:
        with self.db.write() as conn:
            conn.execute(update(sweeps).where(sweeps.c.id == sweep_id).values(status=status))

    def sweep_runs(self, sweep_id: str) -> list[Run]:
        """The runs of a sweep, by setting and seed."""
        with self.db.read() as conn:
            rows = conn.execute(select(runs).where(runs.c.sweep == sweep_id)
                                .order_by(runs.c.trial, runs.c.trial_seed)).mappings().all()
        return [to_run(r) for r in rows]
