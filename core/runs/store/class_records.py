"""A lesson's class rounds and the drawings the class sends in them: a part of RunStore. The rules (who may open a
round, what a drawing must be, what is held out, when it is wiped) live in core/runs/people/class_round.py."""
from __future__ import annotations

import time

from sqlalchemy import delete, func, insert, select, update

from core.messages import ExplainedValueError
from core.runs.rows import ClassDrawingRow, ClassRoundRow
from core.runs.store.database import Database
from core.runs.store.schema import class_drawings, class_rounds

__all__ = ["ClassRecords", "KEEP_S"]

KEEP_S = 12 * 3600  # a lesson's drawings are wiped this long after they were made (the dispatcher sees to it)


class ClassRecords:
    db: Database

    def open_class_round(self, asked: int | None, run_id: str, started_by: str) -> int:
        """End any open round and open a new one; its id."""
        now = time.time()
        with self.db.write(lock="class_rounds") as conn:
            conn.execute(update(class_rounds).where(class_rounds.c.ended.is_(None)).values(ended=now))
            return int(conn.execute(insert(class_rounds).values(asked=asked, run_id=run_id, started_by=started_by,
                                                                started=now).returning(class_rounds.c.id)).scalar_one())

    def end_class_round(self, round_id: int) -> None:
        with self.db.write() as conn:
            conn.execute(update(class_rounds).where(class_rounds.c.id == round_id, class_rounds.c.ended.is_(None))
                         .values(ended=time.time()))

    def class_rounds(self) -> list[ClassRoundRow]:
        """Every round of the lesson, oldest first."""
        with self.db.read() as conn:
            rows = conn.execute(select(class_rounds).order_by(class_rounds.c.id)).mappings()
            return [ClassRoundRow(**r) for r in rows]

    def keep_class_finetune(self, round_id: int, run_id: str, held_out: str) -> None:
        with self.db.write() as conn:
            conn.execute(update(class_rounds).where(class_rounds.c.id == round_id)
                         .values(finetune_run=run_id, held_out=held_out))

    def add_class_drawing(self, round_id: int, student: str, image: bytes, label: int, read_as: int | None,
                          most_each: int, most: int) -> int:
        """Keep one drawing of a student's in an open round (ExplainedValueError when the round has ended, the
        student has sent `most_each` in it or the lesson holds `most`); its id."""
        with self.db.write(lock="class_drawings") as conn:
            ended = conn.execute(select(class_rounds.c.ended).where(class_rounds.c.id == round_id)).first()
            if ended is None or ended[0] is not None:
                raise ExplainedValueError("class_round_closed")
            counted = select(func.count()).select_from(class_drawings)
            if conn.execute(counted.where(class_drawings.c.round_id == round_id,
                                          class_drawings.c.student == student)).scalar_one() >= most_each:
                raise ExplainedValueError("class_round_full_each", most=most_each)
            if conn.execute(counted).scalar_one() >= most:
                raise ExplainedValueError("class_round_full", most=most)
            return int(conn.execute(insert(class_drawings).values(
                round_id=round_id, student=student, image=image, label=label, read_as=read_as, created=time.time())
                .returning(class_drawings.c.id)).scalar_one())

    def class_drawings(self, student: str | None = None) -> list[ClassDrawingRow]:
        """The lesson's drawings (one student's when given), oldest first."""
        query = select(class_drawings).order_by(class_drawings.c.id)
        if student is not None:
            query = query.where(class_drawings.c.student == student)
        with self.db.read() as conn:
            return [ClassDrawingRow(**r) for r in conn.execute(query).mappings()]

    def hide_class_drawing(self, drawing_id: int, hidden: bool) -> None:
        with self.db.write() as conn:
            conn.execute(update(class_drawings).where(class_drawings.c.id == drawing_id).values(hidden=int(hidden)))

    def wipe_class(self, before: float | None = None) -> int:
        """Delete the lesson's drawings and rounds (only those made before `before` when given); how many
        drawings went."""
        with self.db.write(lock="class_drawings") as conn:
            drawings_gone = delete(class_drawings)
            rounds_gone = delete(class_rounds)
            if before is not None:
                drawings_gone = drawings_gone.where(class_drawings.c.created < before)
                rounds_gone = rounds_gone.where(class_rounds.c.started < before, ~select(class_drawings.c.id).where(
                    class_drawings.c.round_id == class_rounds.c.id).exists())
            gone = conn.execute(drawings_gone).rowcount
            conn.execute(rounds_gone)
            return int(gone or 0)
