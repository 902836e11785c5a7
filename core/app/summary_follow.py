"""Summary folders followed by an app server while their trainings write them (Runs' "Follow while it trains"),
as `python -m core.cli.import_summary --watch` follows them from a terminal: one thread per training folder reads
it again every few seconds (SummaryImport.update(final=False)), so its run is live on Train and Compare, and ends
once its training lineage has arrived and the files stay quiet. A folder that stays quiet for QUIET_LIMIT_S
without a lineage (its training crashed, or was stopped) is no longer followed: its run ends as stopped.

Several people asking to follow one folder share its one thread; a server follows at most MAX_FOLLOWED folders.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

from core.app.summary_import import ImportReport, SummaryImport
from core.runs.store import RunStore

__all__ = ["Followers", "FOLLOWERS", "MAX_FOLLOWED", "QUIET_LIMIT_S", "EVERY_S"]

EVERY_S = 2.0          # seconds between two reads of a followed folder
QUIET_LIMIT_S = 600.0  # a folder with nothing new for this long, and no lineage, is followed no more
MAX_FOLLOWED = 20      # folders one server follows at once (each read costs ~1 ms of CPU when nothing is new)


class Followers:
    """The folders this process follows, each by one daemon thread."""

    def __init__(self, every_s: float = EVERY_S, quiet_limit_s: float = QUIET_LIMIT_S, most: int = MAX_FOLLOWED):
        self.every_s, self.quiet_limit_s, self.most = every_s, quiet_limit_s, most
        self._lock = threading.Lock()
        self._threads: dict[Path, threading.Thread] = {}
        self._starting: set[Path] = set()  # folders whose first read is under way

    def follow(self, store: RunStore, folder: Path, who: str) -> ImportReport | None:
        """Read the folder now (in the caller's thread: a fault there is the caller's to show) and follow it from
        then on; its first report, or None when this server follows it already. ValueError: this server follows
        as many folders as it may. The first read happens outside the lock: a folder of months of records
        takes seconds, and nobody else's Follow waits for it."""
        folder = folder.resolve()
        with self._lock:
            self._threads = {f: t for f, t in self._threads.items() if t.is_alive()}
            if folder in self._threads or folder in self._starting:
                return None
            if len(self._threads) + len(self._starting) >= self.most:
                raise ValueError(f"this server already follows {self.most} summary folders: open this one without "
                                 "following it, or follow it from a terminal with python -m core.cli.import_summary "
                                 "--watch")
            self._starting.add(folder)
        try:
            follower = SummaryImport(store, folder, who=who)
            first = follower.update(final=False)  # never ended yet: that takes quiet files after the lineage
        except BaseException:
            with self._lock:
                self._starting.discard(folder)
            raise
        thread = threading.Thread(target=self._follow, args=(follower,), daemon=True,
                                  name=f"summary-follow:{folder.name}")
        with self._lock:
            self._starting.discard(folder)
            self._threads[folder] = thread
            thread.start()
        return first

    def following(self) -> list[Path]:
        with self._lock:
            return sorted(f for f, t in self._threads.items() if t.is_alive())

    def _follow(self, follower: SummaryImport) -> None:
        quiet_since = time.monotonic()
        try:
            while True:
                time.sleep(self.every_s)
                report = follower.update(final=False)
                if report.ended:
                    return
                if report.new_steps:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= self.quiet_limit_s:
                    _log(follower, f"nothing new for {self.quiet_limit_s:.0f} s and no training lineage: "
                                   "followed no more")
                    follower.update(final=True)
                    return
        except Exception as e:  # noqa: BLE001 - a thread's end is said in the run's log, never silently
            _log(follower, f"following its summary folder stopped: {type(e).__name__}: {e}")
            raise


def _log(follower: SummaryImport, line: str) -> None:
    if follower.run_id is not None:
        follower.store.log(follower.run_id, line)


FOLLOWERS = Followers()  # this server process's

