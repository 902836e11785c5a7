"""Everything a person does to runs, checked and recorded: the one door pages and the command line use.

Each action checks core/runs/people/permissions.py's rule (owner or admin for controls; anyone for starting and
copying), writes a line to the store's `history` table (who, what, which run, when; refused attempts too) and then acts.
Admins read the history on the Runs page. The `history` table is in the store's schema (core/runs/store.py).
"""
from __future__ import annotations

import time

from core.config import TrainConfig
from core.formats import ModelFormat, RunFormat
from core.messages import Message
from core.runs.launch import launcher
from core.runs.people.annotations import checked_notes, parse_tags
from core.runs.people.permissions import NotAllowed, Owned, Person
from core.runs import sweeps
from core.runs.rows import FULL_SPEED, HistoryLine, RequestNotice, Run, StartPace
from core.runs.sweeps.results import SweepInfo
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore

__all__ = ["Actions", "HistoryLine", "history", "record"]

def record(store: RunStore, who: str, action: str, run_id: str = "", target: str = "", detail: str = "",
           allowed: bool = True) -> None:
    """One line of the history (who did or tried what)."""
    store.record_action(HistoryLine(time.time(), who or "someone", action, run_id, target, detail, allowed))


def history(store: RunStore, limit: int = 500) -> list[HistoryLine]:
    """The newest actions first."""
    return store.history(limit)


class Actions:
    """What `person` does to the runs of `store`."""

    def __init__(self, store: RunStore, person: Person):
        self.store, self.person = store, person

    # --- anyone signed in but a viewer (in by a class link) ------------------------------------------------------
    def start(self, config: TrainConfig, name: str | None = None, source: str = "dashboard",
              pace: StartPace = FULL_SPEED) -> str:
        self.require("finetune" if source == "finetune" else "start", detail=name or "")
        run_id = launcher.start(self.store, config, name=name, source=source, submitter=self.person.ident,
                                capped=not self.person.admin, pace=pace)
        self._did("start", self.store.get(run_id), detail=source)
        return run_id

    def require(self, what: str, detail: str = "") -> None:
        """NotAllowed (recorded as refused) unless this person may do `what` at all: a viewer may not start,
        sweep, upload, download data or fine-tune (core/runs/people.MEMBERS_ONLY)."""
        if not self.person.may(what):
            self._allow(what, None, detail)

    def did(self, action: str, run: Run | None = None, target: str = "", detail: str = "") -> None:
        """Record an action done elsewhere (an upload, a sweep, a download of data)."""
        self._did(action, run, target, detail)

    # --- the owner or an admin ---------------------------------------------------------------------------------
    def pause(self, run: Run) -> RequestNotice:
        return self._request(run, "pause", lambda: self.store.request(run.id, "pause"))

    def resume(self, run: Run) -> RequestNotice:
        return self._request(run, "resume", lambda: self.store.request(run.id, "resume"))

    def stop(self, run: Run) -> RequestNotice:
        return self._request(run, "stop", lambda: launcher.stop(self.store, run.id))

    def ask(self, run: Run, setting: str, value: float) -> RequestNotice:
        """Change a live setting of the run from its next step (core/live_settings.py: "step" n steps then a
        pause, "step_delay" slow motion, "learning_rate", "momentum", "weight_decay")."""
        return self._request(run, setting, lambda: self.store.ask(run.id, setting, value, who=self.person.ident),
                             detail=f"{value:g}")

    def resume_run(self, run: Run) -> str:
        """Queue a stopped, failed or interrupted run again (from its checkpoint)."""
        self._allow("resume_run", run)
        return launcher.resume(self.store, run.id)

    def rename(self, run: Run, name: str) -> bool:
        self._allow("rename", run, detail=name)
        self.store.rename(run.id, name)
        return True

    def annotate(self, run: Run, tags_text: str, notes: str) -> bool:
        """Set the run's tags ("a, b") and note (ExplainedValueError: a tag or the note that cannot be)."""
        tags, notes = parse_tags(tags_text), checked_notes(notes)
        self._allow("annotate", run, detail=", ".join(tags))
        self.store.annotate(run.id, tags, notes)
        return True

    def delete(self, run: Run) -> bool:
        self._allow("delete", run)
        self.store.delete(run.id)
        return True

    def cancel(self, run: Run) -> bool:
        self._allow("cancel", run)
        return RunQueue(self.store).cancel(run.id)

    def export(self, run: Run, fmt: ModelFormat) -> bool:
        """May this person export the run's model (MindIR, ONNX: files written into the store, CPU spent)? Its
        owner or an admin; recorded either way. Everyone may download its checkpoint."""
        self._allow("export", run, detail=fmt)
        return True

    def export_records(self, runs: list[Run], fmt: RunFormat) -> bool:
        """May this person take these runs' records out (tables, event files, a report)? Each run's owner or an
        admin, as for a model; recorded either way, one line a run."""
        for run in runs:
            self._allow("export", run, detail=f"records as {fmt}")
        return True

    def cancel_sweep(self, sweep: SweepInfo) -> int:
        """Close the sweep: its queued runs cancelled, its training ones stopped; how many."""
        self._allow("cancel_sweep", sweep)
        return sweeps.cancel(self.store, sweep.id)

    def clean_up(self, submitter: str) -> tuple[int, int]:
        """An admin cancels every queued run and open sweep of `submitter` (a classroom server's way out of one
        person's flood); each cancel is a line of the history. (runs cancelled, sweeps cancelled)."""
        if not self.person.admin:
            self._did("clean_up", None, target=submitter, allowed=False)
            raise NotAllowed("admin_only", what=Message("action_clean_up"))
        swept = 0
        for row in self.store.sweeps(status="open"):
            if row.submitter == submitter:
                sweeps.cancel(self.store, row.id)
                self._did("cancel_sweep", row, detail=f"clean-up of {submitter}")
                swept += 1
        queue, cancelled = RunQueue(self.store), 0
        for waiting in queue.waiting():
            if waiting.run.submitter == submitter and queue.cancel(waiting.run.id):
                self._did("cancel", waiting.run, detail=f"clean-up of {submitter}")
                cancelled += 1
        return cancelled, swept

    def move_to_front(self, run: Run) -> bool:
        """An admin moves a run to the front of the whole queue; its owner, to the front of their own runs (their
        turn among other people's stays where it is: fairness holds)."""
        self._allow("move_to_front", run)
        return RunQueue(self.store).move_to_front(run.id, own_line=not self.person.admin)

    # --- the rule and the record -------------------------------------------------------------------------------
    def _allow(self, what: str, run: Owned | None, detail: str = "") -> None:
        try:
            self.person.check(what, run)
        except NotAllowed:
            self._did(what, run, detail=detail, allowed=False)
            raise
        self._did(what, run, detail=detail)

    def _request(self, run: Run, what: str, act, detail: str = "") -> RequestNotice:
        self._allow(what, run, detail)
        return act()

    def _did(self, action: str, run: Owned | None, target: str = "", detail: str = "", allowed: bool = True) -> None:
        if self.store.read_only:
            return  # a store on a read-only mount is read and exported only: nothing there can take a line
        record(self.store, self.person.ident, action, run.id if run else "", target or (run.name if run else ""),
               detail, allowed)
