"""A run's files (model.ckpt, best.ckpt) wherever the run store is read. A part of RunStore.

A SQLite store keeps them in its folder, as it always did: one host reads them there. Where the database is a
server, every host may be asked for them (a page on app server A for a run trained on worker host C), so each
file is also kept in the database when written (`keep_file`; a checkpoint together with the epoch it holds,
in one transaction: `keep_checkpoint`), and `file()` gives a local copy on any host:
the folder's copy when it matches the database's (same size and SHA-256), else fetched from the database into
the folder first. Checkpoints are 0.3-3 MB, so the database keeps them without a second service
(docs/deploy.md has the measured cost)."""
from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select, update

from core.runs.rows import Run
from core.runs.store.database import Database
from core.runs.store.schema import artifacts, runs

__all__ = ["Artifacts", "CHECKPOINT", "BEST"]

CHECKPOINT, BEST = "model.ckpt", "best.ckpt"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Artifacts:
    db: Database
    checkpoints: Path
    checkpoint_path: Callable[[str], Path]  # RunStore's

    def file_path(self, run_id: str, name: str) -> Path:
        """Where this host keeps the run's file `name` (a checkpoint's folder)."""
        return self.checkpoint_path(run_id).parent / name

    def keep_file(self, run_id: str, name: str) -> None:
        """The run's file `name` was (re)written here: keep it where every host reaches it."""
        if not self.db.is_server:
            return
        with self.db.write() as conn:
            conn.execute(self.db.upsert(artifacts, ("run_id", "name")), [self._file_row(run_id, name)])

    def keep_checkpoint(self, run_id: str, names: tuple[str, ...], epoch: int) -> None:
        """The run's checkpoint files `names` (model.ckpt first) were (re)written here at the end of `epoch`:
        keep them where every host reaches them and record the epoch on the run in the same transaction. A
        process killed in between leaves the previous checkpoint and its epoch, never a file of one epoch with
        the row of another (a resumed run on another host drops the epochs after the row's)."""
        rows = [self._file_row(run_id, name) for name in names] if self.db.is_server else []
        with self.db.write() as conn:
            if rows:
                conn.execute(self.db.upsert(artifacts, ("run_id", "name")), rows)
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                checkpoint=str(self.file_path(run_id, names[0])), checkpoint_epoch=epoch))

    def _file_row(self, run_id: str, name: str) -> dict:
        content = self.file_path(run_id, name).read_bytes()
        return dict(run_id=run_id, name=name, content=content, size=len(content),
                    sha256=hashlib.sha256(content).hexdigest(), updated=time.time())

    def has_file(self, run_id: str, name: str = CHECKPOINT) -> bool:
        if self.file_path(run_id, name).exists() and not self.db.is_server:
            return True
        with self.db.read() as conn:
            return conn.execute(select(artifacts.c.size).where(artifacts.c.run_id == run_id,
                                                               artifacts.c.name == name)).first() is not None

    def file(self, run_id: str, name: str = CHECKPOINT) -> Path | None:
        """A local copy of the run's file `name` (None: the run has none)."""
        path = self.file_path(run_id, name)
        if not self.db.is_server:
            return path if path.exists() else None
        with self.db.read() as conn:
            kept = conn.execute(select(artifacts.c.size, artifacts.c.sha256).where(
                artifacts.c.run_id == run_id, artifacts.c.name == name)).first()
            if kept is None:
                return path if path.exists() else None
            if path.exists() and path.stat().st_size == kept.size and _sha256(path) == kept.sha256:
                return path
            content = conn.execute(select(artifacts.c.content).where(
                artifacts.c.run_id == run_id, artifacts.c.name == name)).scalar_one()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.fetch")
        tmp.write_bytes(content)
        os.replace(tmp, path)  # atomic: a reader never sees half a checkpoint
        return path

    def checkpoint_file(self, run: Run) -> str | None:
        """The run's checkpoint as a local file's path, on this host (None: it has none)."""
        if not run.checkpoint:
            return None
        path = self.file(run.id, CHECKPOINT)
        return str(path) if path else None
