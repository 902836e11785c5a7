"""The queue's and the dispatcher's records: which runs wait, claiming the next one, cancelling, moving to the
front, the dispatcher's lease. A part of RunStore; the decisions (order, slots) are core/runs/run_queue.py's.

Each decision is made inside one transaction holding the store's "queue" lock (SQLite: the file's write lock;
PostgreSQL: an advisory lock), so two dispatchers or two submitters on different hosts can never both claim a
run or both see a slot free."""
from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, delete, func, select, update

from core.config import TrainConfig
from core.messages import Message
from core.runs.rows import ACTIVE, OUTSIDE, QUEUED, QueueState
from core.runs.store.convert import to_run
from core.runs.store.database import Database
from core.runs.store.schema import dispatcher, runs

__all__ = ["QueueRecords", "Choice"]

Choice = Callable[[QueueState], "tuple[str, str | None] | None"]  # the run to claim and where it trains, or None


class QueueRecords:
    db: Database

    def queue_state(self) -> QueueState:
        with self.db.read() as conn:
            return _state(conn)

    def claim(self, choose: Choice) -> str | None:
        """Move the run `choose` picks from the queue's state from `queued` to `starting` (with its executor:
        None for this host), in one locked transaction. Its id, or None when nothing was picked."""
        with self.db.write(lock="queue") as conn:
            picked = choose(_state(conn))
            if picked is None:
                return None
            run_id, executor = picked
            now = time.time()
            done = conn.execute(update(runs).where(runs.c.id == run_id, runs.c.status == QUEUED).values(
                status="starting", started=func.coalesce(runs.c.started, now), heartbeat=now,
                executor=executor)).rowcount
        return run_id if done else None

    def queued_count(self, submitter: str) -> int:
        """How many runs `submitter` has waiting in the queue (their sweeps' included)."""
        with self.db.read() as conn:
            return int(conn.execute(select(func.count()).select_from(runs).where(
                runs.c.status == QUEUED, runs.c.submitter == submitter)).scalar_one())

    def cancel_queued(self, run_id: str) -> bool:
        """Cancel a queued run (False: it is not queued any more)."""
        with self.db.write(lock="queue") as conn:
            return bool(conn.execute(update(runs).where(runs.c.id == run_id, runs.c.status == QUEUED).values(
                status="cancelled", finished=time.time(), message="cancelled before it started",
                said=Message("cancelled").to_json())).rowcount)

    def move_to_front(self, run_id: str, own_line: bool = False) -> bool:
        """Make a queued run the next to start (False: it is not queued any more). own_line: the next of its
        submitter's runs only — still taking turns with everyone else's (what a non-admin may do)."""
        with self.db.write(lock="queue") as conn:
            row = conn.execute(select(runs.c.submitter, runs.c.queue_order).where(
                runs.c.id == run_id, runs.c.status == QUEUED)).first()
            if row is None:
                return False
            if own_line:
                if (row.queue_order or 0.0) < 0:
                    return True  # an admin put it at the very front already
                first = conn.execute(select(func.min(runs.c.queue_order)).where(
                    runs.c.status == QUEUED, runs.c.submitter == row.submitter, runs.c.queue_order >= 0)).scalar()
                order = max((first or 0.0) - 1e-3, 0.0)
            else:
                first = conn.execute(select(func.min(runs.c.queue_order)).where(runs.c.status == QUEUED)).scalar()
                order = min(first or 0.0, 0.0) - 1.0
            return bool(conn.execute(update(runs).where(runs.c.id == run_id, runs.c.status == QUEUED)
                                     .values(queue_order=order)).rowcount)

    def recent_speeds(self, limit: int = 20) -> list[tuple[str, float]]:
        """(network, samples/s) of the newest runs that measured a speed, newest first."""
        with self.db.read() as conn:
            rows = conn.execute(select(runs.c.config, runs.c.samples_per_s).where(runs.c.samples_per_s > 0)
                                .order_by(runs.c.created.desc()).limit(limit)).all()
        return [(TrainConfig.from_json(config).network, float(speed)) for config, speed in rows]

    def recent_durations(self, limit: int = 20) -> list[tuple[TrainConfig, int, float]]:
        """(config, epochs trained, seconds from start to end) of the newest completed runs, newest first."""
        with self.db.read() as conn:
            rows = conn.execute(select(runs.c.config, runs.c.epoch, runs.c.started, runs.c.finished)
                                .where(runs.c.status == "completed", runs.c.started.is_not(None),
                                       runs.c.finished.is_not(None), runs.c.epoch > 0)
                                .order_by(runs.c.finished.desc()).limit(limit)).all()
        return [(TrainConfig.from_json(config), int(epoch), float(finished - started))
                for config, epoch, started, finished in rows]

    # --- the dispatcher's lease ------------------------------------------------------------------------------
    def take_lease(self, owner: str, seconds: float) -> bool:
        """Take or renew the lease for `seconds`; whether `owner` holds it now."""
        now = time.time()
        with self.db.write(lock="lease") as conn:
            row = conn.execute(select(dispatcher.c.owner, dispatcher.c.expires).where(dispatcher.c.id == 1)).first()
            if row is not None and row.owner != owner and row.expires > now:
                return False
            conn.execute(self.db.upsert(dispatcher, ("id",)), [dict(id=1, owner=owner, expires=now + seconds)])
        return True

    def release_lease(self, owner: str) -> None:
        with self.db.write(lock="lease") as conn:
            conn.execute(delete(dispatcher).where(dispatcher.c.id == 1, dispatcher.c.owner == owner))

    def lease_holder(self) -> tuple[str, float] | None:
        """(owner, expiry) of the lease, or None."""
        with self.db.read() as conn:
            row = conn.execute(select(dispatcher.c.owner, dispatcher.c.expires).where(dispatcher.c.id == 1)).first()
        return (row.owner, row.expires) if row else None


def _state(conn: Connection) -> QueueState:
    # a script of its own (core.track) trains outside the queue and takes none of its slots
    rows = conn.execute(select(runs).where(runs.c.status.in_((*ACTIVE, QUEUED)), runs.c.source.notin_(OUTSIDE))
                        ).mappings().all()
    found = [to_run(r) for r in rows]
    last = dict(conn.execute(select(runs.c.submitter, func.max(runs.c.started)).where(runs.c.started.is_not(None))
                             .group_by(runs.c.submitter)).all())
    return QueueState([r for r in found if r.status == QUEUED], [r for r in found if r.status in ACTIVE], last)
