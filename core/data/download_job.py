"""A download of the full MNIST running in a background thread, for a page to start, watch and cancel."""
from __future__ import annotations

import threading
from pathlib import Path

from core.data.downloader import DownloadCancelled, Progress, configured_mirrors, download_mnist
from core.data.idx import DataError

__all__ = ["DownloadJob"]


class DownloadJob:
    """state: running -> done | failed | cancelled. progress is the latest report (None before the first);
    error is what went wrong. Several reruns of a page read it while the thread writes it: each field
    is replaced whole, never mutated in place."""

    ENDED = ("done", "failed", "cancelled")

    def __init__(self, target: str | Path, **options):
        options.setdefault("mirrors", configured_mirrors())
        self.target, self.options = Path(target), options  # options: download_mnist's (mirrors, timeout, ...)
        self.state = "running"
        self.progress: Progress | None = None
        self.error: Exception | None = None  # what went wrong (DownloadCancelled, DataError, OSError)
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"download-{self.target.name}")

    @classmethod
    def start(cls, target: str | Path, **options) -> "DownloadJob":
        job = cls(target, **options)
        job._thread.start()
        return job

    @property
    def ended(self) -> bool:
        return self.state in self.ENDED

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            download_mnist(self.target, progress=self._report, cancel=self._cancel, **self.options)
            self.state = "done"
        except DownloadCancelled as e:
            self.error, self.state = e, "cancelled"
        except (DataError, OSError) as e:
            self.error, self.state = e, "failed"

    def _report(self, p: Progress) -> None:
        self.progress = p
