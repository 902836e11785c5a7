"""What a training run records as it goes (steps, epochs, validations, live setting changes, layer statistics,
log lines, data-parallel ranks) and how pages read it back. A part of RunStore (core/runs/store/run_store.py)."""
from __future__ import annotations

import json
import math
import time

from sqlalchemy import delete, func, insert, select, update

from core.messages import Message
from core.runs.rows import LogLine, RankRow, StepRow
from core.runs.store.convert import to_rank
from core.runs.store.database import Database
from core.runs.store.schema import epochs, layer_stats, logs, runs, setting_changes, steps, validations, workers
from core.training.events import EpochMetrics, SettingEvent, ValidationEvent
from core.training.layer_stats import LayerStat

__all__ = ["MetricRecords", "epoch_from_row"]

STAT_FIELDS = ("mean", "std", "min", "max", "norm", "zeros")



def epoch_from_row(row) -> EpochMetrics:
    """An epochs table row (without run_id) as the EpochMetrics it was made from: its confusion counts parsed."""
    values = dict(row)
    raw = values.pop("val_confusion", None)
    confusion = tuple(tuple(int(n) for n in r) for r in json.loads(raw)) if raw else None
    return EpochMetrics(**values, val_confusion=confusion)

class MetricRecords:
    db: Database

    # --- written by workers ----------------------------------------------------------------------------
    def add_steps(self, run_id: str, rows: list[tuple[int, int, float, float]], **progress) -> None:
        """Append (step, epoch, loss, elapsed) rows and update progress fields in one transaction."""
        progress["heartbeat"] = time.time()
        with self.db.write() as conn:
            if rows:
                conn.execute(self.db.upsert(steps, ("run_id", "step")),
                             [dict(run_id=run_id, step=s, epoch=e, loss=loss, elapsed=t) for s, e, loss, t in rows])
            conn.execute(update(runs).where(runs.c.id == run_id).values(**progress))

    def add_epoch(self, run_id: str, m: EpochMetrics) -> None:
        row = dict(run_id=run_id, epoch=m.epoch, train_loss=m.train_loss, train_acc=m.train_acc, val_loss=m.val_loss,
                   val_acc=m.val_acc, epoch_seconds=m.epoch_seconds, samples_per_s=m.samples_per_s, elapsed=m.elapsed,
                   val_confusion=None if m.val_confusion is None else json.dumps(m.val_confusion))
        with self.db.write() as conn:
            conn.execute(self.db.upsert(epochs, ("run_id", "epoch")), [row])

    def add_layer_stats(self, run_id: str, stats: list[LayerStat]) -> None:
        if not stats:
            return
        rows = [dict(run_id=run_id, epoch=s.epoch, param=s.param, kind=s.kind, **{k: _number(getattr(s, k))
                                                                                 for k in STAT_FIELDS},
                     hist=json.dumps({"edges": s.hist_edges, "counts": s.hist_counts}), position=i)
                for i, s in enumerate(stats)]
        with self.db.write() as conn:
            conn.execute(self.db.upsert(layer_stats, ("run_id", "epoch", "param", "kind")), rows)

    def add_validation(self, run_id: str, v: ValidationEvent) -> None:
        with self.db.write() as conn:
            conn.execute(self.db.upsert(validations, ("run_id", "step")),
                         [dict(run_id=run_id, step=v.step, epoch=v.epoch, val_loss=v.val_loss, val_acc=v.val_acc)])

    def add_setting_change(self, run_id: str, e: SettingEvent) -> None:
        with self.db.write() as conn:
            conn.execute(self.db.upsert(setting_changes, ("run_id", "step", "setting")),
                         [dict(run_id=run_id, step=e.step, setting=e.setting, value=e.value, replayed=int(e.replayed),
                               t=time.time())])

    def log(self, run_id: str, message: str) -> None:
        with self.db.write() as conn:
            conn.execute(insert(logs).values(run_id=run_id, t=time.time(), message=message))

    # --- read by pages ---------------------------------------------------------------------------------
    def validations(self, run_id: str) -> list[ValidationEvent]:
        with self.db.read() as conn:
            rows = conn.execute(select(validations.c.step, validations.c.epoch, validations.c.val_loss,
                                       validations.c.val_acc).where(validations.c.run_id == run_id)
                                .order_by(validations.c.step)).mappings().all()
        return [ValidationEvent(**r) for r in rows]

    def setting_changes(self, run_id: str, setting: str | None = None) -> list[SettingEvent]:
        """Every live setting change of a run (or of one setting), by step (asked for while it trained, or
        replayed)."""
        c = setting_changes.c
        query = select(c.step, c.setting, c.value, c.replayed).where(c.run_id == run_id)
        if setting is not None:
            query = query.where(c.setting == setting)
        with self.db.read() as conn:
            rows = conn.execute(query.order_by(c.step, c.setting)).all()
        return [SettingEvent(step, name, value, bool(replayed)) for step, name, value, replayed in rows]

    def layer_stats(self, run_id: str) -> list[LayerStat]:
        """Every recorded weight/gradient summary of a run, by epoch then parameter (in network order)."""
        with self.db.read() as conn:
            rows = conn.execute(select(layer_stats).where(layer_stats.c.run_id == run_id)
                                .order_by(layer_stats.c.epoch, layer_stats.c.position)).mappings().all()
        out = []
        for r in rows:
            hist = json.loads(r["hist"])
            nums = {k: math.nan if r[k] is None else r[k] for k in STAT_FIELDS}
            out.append(LayerStat(r["epoch"], r["param"], r["kind"], **nums, hist_edges=tuple(hist["edges"]),
                                 hist_counts=tuple(hist["counts"])))
        return out

    def steps(self, run_id: str, max_points: int = 2000) -> list[StepRow]:
        """Step losses; more than max_points steps are averaged in equal buckets of consecutive steps (each row
        then has the bucket's last step, mean loss, min and max, and how many steps it stands for)."""
        with self.db.read() as conn:
            n = conn.execute(select(func.count()).select_from(steps).where(steps.c.run_id == run_id)).scalar_one()
            every = max(1, -(-n // max_points))
            bucket = (steps.c.step - 1) // every  # integer division on both databases
            rows = conn.execute(
                select(func.max(steps.c.step).label("step"), func.max(steps.c.epoch).label("epoch"),
                       func.avg(steps.c.loss).label("loss"), func.min(steps.c.loss).label("loss_min"),
                       func.max(steps.c.loss).label("loss_max"), func.max(steps.c.elapsed).label("elapsed"),
                       func.count().label("count"))
                .where(steps.c.run_id == run_id).group_by(bucket).order_by(func.max(steps.c.step))).mappings().all()
        return [StepRow(**r) for r in rows]

    def epochs(self, run_id: str) -> list[EpochMetrics]:
        with self.db.read() as conn:
            rows = conn.execute(select(*[c for c in epochs.c if c.name != "run_id"])
                                .where(epochs.c.run_id == run_id).order_by(epochs.c.epoch)).mappings().all()
        return [epoch_from_row(r) for r in rows]

    def logs(self, run_id: str, limit: int = 200) -> list[LogLine]:
        with self.db.read() as conn:
            rows = conn.execute(select(logs.c.t, logs.c.message).where(logs.c.run_id == run_id)
                                .order_by(logs.c.id.desc()).limit(limit)).all()
        return [LogLine(t, message) for t, message in reversed(rows)]

    # --- data-parallel ranks (the `workers` table) -------------------------------------------------------
    def set_rank(self, run_id: str, rank: int, **fields) -> None:
        """Create or update one data-parallel rank's row (state, step, epoch, pid, host, message: a Message is
        kept with its catalogue key too)."""
        fields["heartbeat"] = time.time()
        if "message" in fields:
            message = fields["message"]
            fields["message"] = str(message)
            fields["said"] = message.to_json() if isinstance(message, Message) else None
        with self.db.write() as conn:
            conn.execute(self.db.insert_ignore(workers, dict(run_id=run_id, rank=rank), ("run_id", "rank")))
            conn.execute(update(workers).where(workers.c.run_id == run_id, workers.c.rank == rank).values(**fields))

    def ranks(self, run_id: str) -> list[RankRow]:
        with self.db.read() as conn:
            rows = conn.execute(select(workers).where(workers.c.run_id == run_id)
                                .order_by(workers.c.rank)).mappings().all()
        return [to_rank(r) for r in rows]

    def clear_ranks(self, run_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(delete(workers).where(workers.c.run_id == run_id))


def _number(value: float | None) -> float | None:
    """NaN as NULL on every database (SQLite stores it so; PostgreSQL would keep NaN and the pages read None)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value
