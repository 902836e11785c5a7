"""Where a fine-tune's starting weights come from: `init_checkpoint` is a checkpoint file or `run:RUN_ID`, a run
of the store (its final checkpoint). A run id means the same on every host of a team's database, a path only
on the host that wrote it, so the studio itself writes run ids (Draw's fine-tune, a link on a shared server)."""
from __future__ import annotations

from core.config import TrainConfig
from core.messages import ExplainedValueError
from core.runs.store import RunStore

__all__ = ["RUN_PREFIX", "run_reference", "referenced_run", "checkpoint_for", "with_start_file"]

RUN_PREFIX = "run:"


def run_reference(run_id: str) -> str:
    return RUN_PREFIX + run_id


def referenced_run(value: str | None) -> str | None:
    """The run id an init_checkpoint names (None: it is a file's path, or nothing)."""
    if value and value.startswith(RUN_PREFIX):
        return value[len(RUN_PREFIX):].strip()
    return None


def checkpoint_for(store: RunStore, value: str) -> str:
    """init_checkpoint as a local file: a run's checkpoint fetched on this host, or the path as given."""
    run_id = referenced_run(value)
    if run_id is None:
        return value
    run = store.get(run_id)
    path = store.checkpoint_file(run) if run is not None else None
    if path is None:
        raise ExplainedValueError("start_run_has_no_checkpoint", run=run_id)
    return path


def with_start_file(store: RunStore, config: TrainConfig) -> TrainConfig:
    """The config to train, its init_checkpoint a file on this host."""
    if config.init_checkpoint is None or referenced_run(config.init_checkpoint) is None:
        return config
    return config.with_(init_checkpoint=checkpoint_for(store, config.init_checkpoint))
