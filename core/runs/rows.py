"""What the run store returns: typed rows (no MindSpore, no SQL here).

Words: a *run* is one training job; its *worker process* (core.cli.worker, or the command line) trains it; a
data-parallel run has several *ranks* (msrun's processes, one row each in the store's `workers` table).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from core.config import TrainConfig
from core.messages import Message

__all__ = ["Status", "Request", "ACTIVE", "FINISHED", "RESUMABLE", "RANK_ALIVE", "QUEUED", "EXTERNAL", "SUMMARY",
           "OUTSIDE", "SOURCES", "Run", "RunRequests", "RequestNotice", "StepRow", "LogLine", "RankRow", "HistoryLine",
           "DrawingRow", "ClassRoundRow", "ClassDrawingRow", "SweepRow", "QueueState"]

class Status(StrEnum):
    """Where a run is: queued, then active (starting, running, paused), then finished in one way. A StrEnum:
    each is also its plain string, as the store keeps it."""
    QUEUED = "queued"  # waiting for a slot (core/runs/run_queue.py): it holds no slot and no process
    STARTING = "starting"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    EARLY_STOPPED = "early_stopped"
    STOPPED = "stopped"
    DIVERGED = "diverged"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # its process died or went silent
    CANCELLED = "cancelled"      # taken out of the queue before it trained
    PRUNED = "pruned"            # stopped early by its sweep


class Request(StrEnum):
    """What a run's worker is asked to do between steps."""
    RUN = "run"
    PAUSE = "pause"
    STOP = "stop"


@dataclass(frozen=True)
class StartPace:
    """How a run begins: paused before its first step (a lesson's Step ×n shows the first steps), and in slow
    motion from its first step. Either can be changed while it trains."""
    paused: bool = False
    step_delay: float = 0.0  # seconds before every step (core/training/run_control.MAX_STEP_DELAY_S at most)

    def row(self) -> dict:
        """The run row's columns that carry it."""
        return {"request": Request.PAUSE if self.paused else Request.RUN, "step_delay": float(self.step_delay)}


FULL_SPEED = StartPace()


ACTIVE = (Status.STARTING, Status.RUNNING, Status.PAUSED)
QUEUED = Status.QUEUED
FINISHED = (Status.COMPLETED, Status.EARLY_STOPPED, Status.STOPPED, Status.DIVERGED, Status.FAILED,
            Status.INTERRUPTED, Status.CANCELLED, Status.PRUNED)
RESUMABLE = (Status.STOPPED, Status.FAILED, Status.INTERRUPTED)  # with a checkpoint; diverged: a new rate
EXTERNAL = "external"  # the source of a run a script of its own records (core/track.py)
SUMMARY = "summary"    # the source of a run read from another tool's files (core/app/summary_import.py)
OUTSIDE = (EXTERNAL, SUMMARY)  # trained outside the studio: it neither queues nor takes the studio's controls
SOURCES = ("dashboard", "cli", "sweep", "finetune", "upload", *OUTSIDE)  # where runs come from (locales: sources.*)
RANK_ALIVE = ("starting", "training")             # a rank in these states should have a live process


@dataclass(frozen=True)
class RunRequests:
    """What a run is asked while it trains, as its training process reads it every few tenths of a second: pause
    or stop and slow motion's delay (its row), and the live settings asked for and not yet taken (the requests
    table; core/live_settings.py: a lesson's "step", "learning_rate", "momentum", "weight_decay")."""
    request: Request
    step_delay: float = 0.0
    asked: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    id: str
    name: str
    source: str
    config: TrainConfig
    status: Status
    message: str
    request: Request
    created: float
    started: float | None
    finished: float | None
    heartbeat: float | None
    pid: int | None
    phase: str
    step: int
    total_steps: int
    epoch: int
    samples_per_s: float | None
    eta: float | None
    best_val_acc: float | None
    best_val_loss: float | None
    best_epoch: int | None
    checkpoint: str | None
    said: Message | None = None  # the message with its catalogue key (None: a message from before keys)
    step_delay: float = 0.0          # slow motion: seconds to wait before every step
    submitter: str = ""              # who queued it (a user name; the queue's fairness is between submitters)
    queue_order: float | None = None  # place in its submitter's line (negative: moved to the front of the queue)
    waiter_pid: int | None = None    # a command line waiting to train it in its own process once it may start
    slots: int = 1                   # slots it takes while it trains (a data-parallel run: one per worker)
    sweep: str | None = None         # the sweep it belongs to (core/runs/sweeps/), its setting and seed there
    trial: int | None = None
    trial_seed: int | None = None
    executor: str | None = None      # where it trains when not on this host: "dask:<task key>" (dask_executor.py)
    checkpoint_epoch: int | None = None  # the epoch its checkpoint holds
    host: str | None = None          # the host its pid lives on
    params: dict | None = None       # an external run's own settings, as its script passed them (core/track.py)
    tags: tuple[str, ...] = ()       # the Runs page's tags, to search and filter by
    notes: str = ""                  # a note its owner keeps with it

    def outcome(self) -> Message | str:
        """How it ended, without where its checkpoint lies (core/runs/worker/execute.py adds "; checkpoint: PATH"
        for the logs and the command line): a page shows the checkpoint apart, a report not at all."""
        said = self.said
        if said is not None and said.key in ("with_checkpoint", "with_checkpoint_shared") \
                and isinstance(said.values.get("what"), Message):
            return said.values["what"]
        return said if said is not None else self.message

    @property
    def external(self) -> bool:
        """Trained outside the studio: by a script of its own (core.track; the studio can pause or stop it only
        where the script asks run.should_stop()) or read from its summary files (imported)."""
        return self.source in OUTSIDE

    @property
    def imported(self) -> bool:
        """Read from a MindSpore summary or TensorBoard folder (params["summary_dir"]): no control reaches it."""
        return self.source == SUMMARY

    @property
    def remote(self) -> bool:
        return bool(self.executor)

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def duration(self) -> float | None:
        if self.started is None:
            return None
        return (self.finished or time.time()) - self.started


@dataclass(frozen=True)
class RequestNotice:
    """What became of a pause, resume or stop request. A page says it with the catalogue entry
    train.notice_<code> ({name}, {status}); str() is the English of the command line and the logs."""
    code: str        # requested | gone | finished | already_stopping | bad_value | not_parallel
    what: str        # pause | resume | stop | step | learning_rate | delay
    name: str = ""   # the run's
    status: str = ""

    def __str__(self) -> str:
        return {"requested": f"{self.what.replace('_', ' ').capitalize()} requested.",
                "gone": "That run no longer exists.",
                "finished": f"Run '{self.name}' has already finished ({self.status}); nothing to {self.what}.",
                "already_stopping": f"Stop was already requested for '{self.name}'.",
                "bad_value": f"That value cannot be used for {self.what.replace('_', ' ')}.",
                "not_parallel": f"'{self.name}' trains data-parallel: {self.what.replace('_', ' ')} changes are "
                                "made for single-process runs only."}[self.code]


@dataclass(frozen=True)
class StepRow:
    """One step, or the mean of `count` consecutive steps ending at `step` (a long run's history downsampled)."""
    step: int
    epoch: int
    loss: float | None
    elapsed: float | None
    loss_min: float | None = None
    loss_max: float | None = None
    count: int = 1


@dataclass(frozen=True)
class LogLine:
    t: float
    message: str


@dataclass(frozen=True)
class RankRow:
    """One data-parallel process of a run."""
    run_id: str
    rank: int
    host: str
    pid: int | None
    state: str              # starting | training | completed | early_stopped | stopped | failed | died
    step: int
    epoch: int
    heartbeat: float | None
    message: str
    weights_sha256: str | None
    said: Message | None = None  # the message with its catalogue key

    @property
    def alive_state(self) -> bool:
        return self.state in RANK_ALIVE


@dataclass(frozen=True)
class HistoryLine:
    """One action a person did or tried (core/runs/people/actions.py)."""
    t: float
    who: str
    action: str
    run_id: str
    target: str
    detail: str
    allowed: bool


@dataclass(frozen=True)
class DrawingRow:
    """One drawing of a person's handwriting as stored: a 28×28 uint8 image's bytes."""
    id: int
    image: bytes
    label: int
    read_as: int | None
    run_id: str | None
    created: float
    owner: str


@dataclass(frozen=True)
class ClassRoundRow:
    """One round of a lesson as stored (core/runs/people/class_round.py)."""
    id: int
    asked: int | None        # the digit asked for; None: each student says which digit they drew
    run_id: str              # the model that reads the drawings
    started_by: str
    started: float
    ended: float | None
    finetune_run: str | None
    held_out: str | None     # JSON list of drawing ids


@dataclass(frozen=True)
class ClassDrawingRow:
    """One drawing a student sent in a round: a 28×28 uint8 image's bytes and their display name alone."""
    id: int
    round_id: int
    student: str
    image: bytes
    label: int
    read_as: int | None
    hidden: int
    created: float


@dataclass(frozen=True)
class SweepRow:
    """A sweep as stored: its spec is JSON (core/runs/sweeps/ reads it)."""
    id: str
    name: str
    spec: str
    submitter: str
    created: float
    status: str  # open | done


@dataclass(frozen=True)
class QueueState:
    """What the queue decides from, read in one transaction."""
    queued: list[Run]
    active: list[Run]
    last_started: dict[str, float]  # submitter -> when their last run started
