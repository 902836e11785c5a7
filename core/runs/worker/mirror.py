"""Copying one run's records between two run stores: what a run trained on a Dask worker sends back.

The machine that trains a run remotely keeps a scratch store of its own (core/runs/worker/remote_run.py) and runs the
ordinary worker process against it; this module reads what that store gained since the last look (a Delta:
changed run fields, new rows, changed checkpoint files, new lines of the worker's own log) and writes it into
the app's store. Deltas are plain dicts of numbers, strings and bytes, so that Dask can carry them.

Times that decide liveness (heartbeat, finished) are the app's own clock, never the remote machine's.
No MindSpore here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.runs.rows import FINISHED
from core.runs.store import RunStore

__all__ = ["Cursor", "RUN_FIELDS", "TABLES", "delta", "apply", "seed_rows", "plant_seed", "is_empty"]

# The run row's fields the training process writes (not its pid or paths, which mean nothing elsewhere).
RUN_FIELDS = ("status", "message", "said", "request", "phase", "step", "total_steps", "epoch", "samples_per_s",
              "eta", "best_val_acc", "best_val_loss", "best_epoch", "checkpoint_epoch")
TABLES = ("steps", "epochs", "logs", "validations", "setting_changes", "layer_stats")
HERE = "<this run's checkpoint folder>"  # a path in a message, written where the run's checkpoints are
SEEDED = ("steps", "epochs", "validations", "setting_changes", "layer_stats")  # what a resumed run needs to go on


@dataclass
class Cursor:
    """How far one store's run has been read: the last rowid of each table, each checkpoint file's
    (size, mtime), the worker log's offset and the run fields as last sent."""
    rowids: dict[str, int] = field(default_factory=dict)
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    log_offset: int = 0
    run: dict = field(default_factory=dict)

    @classmethod
    def at_end(cls, store: RunStore, run_id: str) -> "Cursor":
        """A cursor past everything already there (the rows a remote run was seeded with)."""
        cursor = cls()
        cursor.rowids = store.last_rowids(run_id, TABLES)
        cursor.files = {p.name: _stamp(p) for p in _checkpoint_files(store, run_id)}
        return cursor


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _checkpoint_files(store: RunStore, run_id: str) -> list[Path]:
    folder = store.checkpoint_path(run_id).parent
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def delta(store: RunStore, run_id: str, cursor: Cursor) -> dict:
    """What the run gained in store since cursor (which moves on)."""
    out: dict = {"run": {}, "rows": {}, "files": {}, "log": b""}
    row = store.run_row(run_id, RUN_FIELDS)
    if row is not None:
        changed = {k: row[k] for k in RUN_FIELDS if cursor.run.get(k, object()) != row[k]}
        cursor.run.update(changed)
        out["run"] = {k: _paths(v, store, run_id, HERE) for k, v in changed.items()}
    for table in TABLES:
        block, cursor.rowids[table] = store.rows_since(run_id, table, cursor.rowids.get(table, 0))
        if block["values"]:
            out["rows"][table] = {"columns": block["columns"],
                                  "values": [[_paths(v, store, run_id, HERE) for v in r] for r in block["values"]]}
    for path in _checkpoint_files(store, run_id):
        stamp = _stamp(path)
        if cursor.files.get(path.name) != stamp:
            out["files"][path.name] = path.read_bytes()  # written atomically (os.replace): never half a file
            cursor.files[path.name] = stamp
    log = store.log_path(run_id)
    if log.exists() and log.stat().st_size > cursor.log_offset:
        with open(log, "rb") as f:
            f.seek(cursor.log_offset)
            out["log"] = f.read()
        cursor.log_offset += len(out["log"])
    return out


def _paths(value, store: RunStore, run_id: str, marker: str):
    """A message's path to the run's checkpoint folder of one store, as marker (and back: see apply)."""
    if isinstance(value, str):
        here = str(store.checkpoint_path(run_id).parent)
        return value.replace(here, marker) if marker == HERE else value.replace(HERE, here)
    return value


def is_empty(d: dict) -> bool:
    return not (d["run"] or d["rows"] or d["files"] or d["log"])


def apply(store: RunStore, run_id: str, d: dict, now: float) -> None:
    """Write a delta into store (the app's), stamping the run alive at `now` (this machine's clock)."""
    for name, content in d["files"].items():
        _write_atomically(store.checkpoint_path(run_id).parent / Path(name).name, content)
    fields = {k: _paths(v, store, run_id, "") for k, v in d["run"].items()}
    fields["heartbeat"] = now
    if "model.ckpt" in d["files"]:
        fields["checkpoint"] = str(store.checkpoint_path(run_id))
    if fields.get("status") in FINISHED:
        fields["finished"] = now
    blocks = {table: {"columns": block["columns"],
                      "values": [[_paths(v, store, run_id, "") for v in values] for values in block["values"]]}
              for table, block in d["rows"].items() if table in TABLES}
    store.put_records(run_id, blocks, {k: v for k, v in fields.items()
                                       if k in (*RUN_FIELDS, "heartbeat", "checkpoint", "finished")})
    if d["log"]:
        with open(store.log_path(run_id), "ab") as f:
            f.write(d["log"])


def _write_atomically(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    tmp.write_bytes(content)
    os.replace(tmp, path)


def seed_rows(store: RunStore, run_id: str) -> dict:
    """What a remote machine needs to train (or resume) the run: its row, the metrics a resume goes on from
    and its checkpoint files."""
    keep = ("id", "name", "source", "config", "created", "request", "step_delay", "step", "epoch", "total_steps",
            "best_val_acc", "best_val_loss", "best_epoch", "checkpoint_epoch")
    rows = {table: block for table in SEEDED if (block := store.run_records(run_id, table))["values"]}
    files = {p.name: p.read_bytes() for p in _checkpoint_files(store, run_id)}
    return {"run": store.run_row(run_id, keep), "rows": rows, "files": files}


def plant_seed(store: RunStore, seed: dict, config_json: str) -> str:
    """Create the run from seed_rows in a scratch store, with config_json (its data folder there). Not a sweep's
    trial there: pruning is decided by the app, which has the study. Returns the run's id."""
    run = dict(seed["run"], config=config_json, status="starting")
    run_id = run["id"]
    store.insert_run_row(run)
    store.put_records(run_id, seed["rows"])
    for name, content in seed["files"].items():
        _write_atomically(store.checkpoint_path(run_id).parent / Path(name).name, content)
    if seed["files"].get("model.ckpt") is not None:
        store.update(run_id, checkpoint=str(store.checkpoint_path(run_id)))
    return run_id
