"""From a database row to the typed rows the store returns (core/runs/rows.py)."""
from __future__ import annotations

import json
from collections.abc import Mapping

from core.config import TrainConfig
from core.messages import Message
from core.runs.rows import RankRow, Request, Run, Status

__all__ = ["to_run", "to_rank"]


def to_run(row: Mapping) -> Run:
    d = dict(row)
    d["config"] = TrainConfig.from_json(d["config"])
    d["said"] = Message.from_json(d.get("said"))
    d["status"], d["request"] = Status(d["status"]), Request(d["request"])
    d["params"] = json.loads(d["params"]) if d.get("params") else None
    d["tags"] = tuple(json.loads(d["tags"])) if d.get("tags") else ()
    return Run(**d)


def to_rank(row: Mapping) -> RankRow:
    return RankRow(**{**dict(row), "said": Message.from_json(row["said"])})
