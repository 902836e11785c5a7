"""The CPU each test file costs (its worker's own and its finished children's), written as JSON when
$STUDIO_CPU_REPORT names a file: bench/test_groups.py reads it to say where the suite's time goes. A file's
tests run on one worker one after another (--dist loadfile), so each file's figure is that worker's usage
from its first test's setup to its last test's teardown; each worker of each session writes
$STUDIO_CPU_REPORT.<session>.<worker> (./test.sh's two phases are two sessions). `python -m bench.test_groups
--cpu-report $STUDIO_CPU_REPORT` sums them by group."""
from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest

REPORT_ENV = "STUDIO_CPU_REPORT"


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class CpuReport:
    def __init__(self, path: Path):
        self.path = path
        self.files: dict[str, dict[str, float]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu0, wall0 = _cpu_s(), time.monotonic()
        yield
        row = self._row(item.location[0])
        row["cpu_s"] += _cpu_s() - cpu0
        row["wall_s"] += time.monotonic() - wall0
        row["tests"] += 1

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self._row(report.location[0])["failed"] += 1

    def _row(self, file: str) -> dict[str, float]:
        return self.files.setdefault(file, {"cpu_s": 0.0, "wall_s": 0.0, "tests": 0, "failed": 0})

    def pytest_sessionfinish(self, session):
        if not self.files:
            return  # xdist's controller: its workers ran the tests
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))[:12]
        Path(f"{self.path}.{run}.{worker}").write_text(json.dumps(self.files, indent=1))


def register(config) -> None:
    path = os.environ.get(REPORT_ENV, "").strip()
    if path:
        config.pluginmanager.register(CpuReport(Path(path)), "studio-cpu-report")
