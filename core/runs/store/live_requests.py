"""What a run is asked while it trains, by live setting (core/live_settings.py): pause, resume and stop on its
row, and one requests row a setting (a lesson's Step, a learning rate, momentum, weight decay) that its worker
takes; slow motion's delay stands on the run's row. A part of RunStore (core/runs/store/run_store.py)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update

from core.config import TrainConfig
from core.live_settings import live_setting
from core.runs.rows import ACTIVE, Request, RequestNotice, Run, RunRequests
from core.runs.store.database import Database
from core.runs.store.schema import requests, runs

if TYPE_CHECKING:
    from core.training.events import SettingEvent

__all__ = ["LiveRequests"]


class LiveRequests:
    db: Database
    if TYPE_CHECKING:  # RunStore's and MetricRecords'
        def get(self, run_id: str) -> Run | None: ...
        def existing(self, run_id: str) -> Run: ...
        def update(self, run_id: str, **fields) -> None: ...
        def setting_changes(self, run_id: str, setting: str | None = None) -> list[SettingEvent]: ...

    def request(self, run_id: str, what: str) -> RequestNotice:
        """Ask a run to pause, resume or stop. Returns what happened. A Stop asked stays asked: a Pause or Resume
        after it (from a second page that still showed the run paused) is answered "Stop was already requested"
        and changes nothing. The check and the write are one statement, so a run that ends, or is stopped,
        meanwhile is not asked again."""
        assert what in ("pause", "resume", "stop")
        with self.db.write() as conn:
            asked = conn.execute(update(runs).where(
                runs.c.id == run_id, runs.c.status.in_(ACTIVE), runs.c.request != Request.STOP.value).values(
                request={"pause": "pause", "resume": "run", "stop": "stop"}[what])).rowcount
        run = self.get(run_id)
        if run is None:
            return RequestNotice("gone", what)
        if asked:
            return RequestNotice("requested", what, run.name, run.status)
        if not run.active:
            return RequestNotice("finished", what, run.name, run.status)
        return RequestNotice("already_stopping", what, run.name, run.status)

    def ask(self, run_id: str, setting: str, value: float, who: str = "") -> RequestNotice:
        """Ask a run to change a live setting from its next step (a Step of n also resumes it, then pauses after
        n steps). Refused for a run that is gone or over, a value out of the setting's range, and an optimizer
        setting of a data-parallel run or one its optimizer lacks."""
        entry = live_setting(setting)
        run = self.get(run_id)
        if run is None:
            return RequestNotice("gone", setting)
        if not run.active:
            return RequestNotice("finished", setting, run.name, run.status)
        if not entry.valid(value) or not entry.applies(run.config):
            return RequestNotice("bad_value", setting, run.name, run.status)
        if run.config.workers > 1 and not entry.parallel_ok:
            return RequestNotice("not_parallel", setting, run.name, run.status)
        if not entry.once:  # a standing setting is a column of the run's row, of its name
            self.update(run_id, **{setting: float(value)})
            return RequestNotice("requested", setting, run.name, run.status)
        with self.db.write() as conn:
            conn.execute(self.db.upsert(requests, ("run_id", "setting")),
                         [dict(run_id=run_id, setting=setting, value=float(value), who=who, asked=time.time())])
            if entry.resumes:  # a Step resumes a paused run, but does not take back a Stop asked
                conn.execute(runs.update().where(runs.c.id == run_id, runs.c.request != Request.STOP.value)
                             .values(request=Request.RUN))
        return RequestNotice("requested", setting, run.name, run.status)

    def take(self, run_id: str, setting: str, value: float) -> None:
        """The worker took the request (a newer one written meanwhile stays)."""
        with self.db.write() as conn:
            conn.execute(delete(requests).where(requests.c.run_id == run_id, requests.c.setting == setting,
                                                requests.c.value == value))

    def requests(self, run_id: str) -> RunRequests | None:
        """What the run is asked while it trains (None: it is gone): two columns of its row and its requests
        rows, the rest neither read nor parsed (its training process asks every
        core.runs.worker.recording.CONTROL_EVERY_S; reading the whole run took ~2 ms)."""
        with self.db.read() as conn:
            row = conn.execute(select(runs.c.request, runs.c.step_delay).where(runs.c.id == run_id)).first()
            asked = conn.execute(select(requests.c.setting, requests.c.value)
                                 .where(requests.c.run_id == run_id)).all() if row else []
        if row is None:
            return None
        return RunRequests(Request(row.request), row.step_delay or 0.0, {s: v for s, v in asked})

    def replay_config(self, run_id: str) -> TrainConfig:
        """The run's config with the live setting changes it made while it trained: what a re-run (or the run
        itself, resumed) replays at the same steps (RunGone: it was deleted)."""
        run = self.existing(run_id)
        recorded = {(e.step, e.setting): e.value for e in self.setting_changes(run_id)}
        if not recorded:
            return run.config
        merged = {(step, setting): value for step, setting, value in run.config.setting_changes} | recorded
        return run.config.with_(setting_changes=tuple((step, setting, value)
                                                      for (step, setting), value in sorted(merged.items())))
