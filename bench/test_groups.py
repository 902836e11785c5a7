"""The test suite's time per group (tests/unit, process, browser, reliability), so its growth is visible: each group
run on its own, one after another, as `./test.sh -m GROUP` runs it; its wall time, its test count and outcome,
and its slowest files.

    .venv/bin/python -m bench.test_groups                 # the whole suite, one group at a time (~40 min here)
    .venv/bin/python -m bench.test_groups --groups unit   # one group
    .venv/bin/python -m bench.test_groups --junit REPORT.xml --wall SECONDS   # a whole-suite run's report, by group
    STUDIO_CPU_REPORT=/tmp/cpu bash .ci/run; .venv/bin/python -m bench.test_groups --cpu-report /tmp/cpu --wall S
        # by group, with the CPU each group's files cost (tests/support/cpu_report.py)

Results: bench/results/test_groups.json (a benchmark, not a test: nothing here passes or fails on a time).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from bench.record import save, stamp

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ("unit", "process", "browser", "reliability")


def run_group(group: str, junit: Path) -> dict:
    """pytest on one group's folder; the figures from its JUnit report."""
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", group, f"tests/{group}", f"--junitxml={junit}",
                           "--durations=0"], cwd=ROOT, env=dict(os.environ), capture_output=True, text=True)
    wall = time.perf_counter() - began
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None, f"no JUnit report from the {group} group:\n{proc.stdout[-2000:]}"
    per_file: dict[str, float] = defaultdict(float)
    for case in suite.iter("testcase"):
        per_file[case.get("classname", "").rsplit(".", 1)[0]] += float(case.get("time", 0))
    slowest = sorted(per_file.items(), key=lambda kv: -kv[1])[:5]
    return {"group": group, "wall_s": round(wall, 1), "tests": int(suite.get("tests", 0)),
            "failures": int(suite.get("failures", 0)) + int(suite.get("errors", 0)),
            "skipped": int(suite.get("skipped", 0)), "exit_code": proc.returncode,
            "slowest_files": [{"module": m, "s": round(s, 1)} for m, s in slowest]}


def from_report(junit: Path) -> list[dict]:
    """The groups' figures from one whole-suite run's JUnit report (e.g. `PYTEST_ADDOPTS=--junitxml=R bash
    .ci/run`): each group's tests' own times summed (setup and teardown included), as they ran side by side."""
    rows: dict[str, dict] = {g: {"group": g, "test_s": 0.0, "tests": 0, "failures": 0, "skipped": 0} for g in GROUPS}
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        if len(parts) < 2 or parts[1] not in rows:
            continue
        row = rows[parts[1]]
        row["tests"] += 1
        row["test_s"] += float(case.get("time", 0))
        row["failures"] += len(case.findall("failure")) + len(case.findall("error"))
        row["skipped"] += len(case.findall("skipped"))
    return [{**r, "test_s": round(r["test_s"], 1)} for r in rows.values()]


def from_cpu_reports(prefix: str) -> list[dict]:
    """The groups' figures from the per-file reports of tests/support/cpu_report.py ($STUDIO_CPU_REPORT=prefix):
    each group's files' wall time summed as they ran side by side, and their CPU (worker and finished children)."""
    rows: dict[str, dict] = {g: {"group": g, "test_s": 0.0, "cpu_s": 0.0, "tests": 0, "failures": 0} for g in GROUPS}
    found = sorted(Path(prefix).parent.glob(Path(prefix).name + ".*"))
    assert found, f"no reports {prefix}.* (run the suite with STUDIO_CPU_REPORT={prefix})"
    for report in found:
        for file, figures in json.loads(report.read_text()).items():
            row = rows.get(Path(file).parent.name)
            if row is not None:
                row["test_s"] += figures["wall_s"]
                row["cpu_s"] += figures["cpu_s"]
                row["tests"] += int(figures["tests"])
                row["failures"] += int(figures.get("failed", 0))
    return [{**r, "test_s": round(r["test_s"], 1), "cpu_s": round(r["cpu_s"], 1)} for r in rows.values()]


def _summarised(rows: list[dict], command: str, wall: float | None) -> None:
    for r in rows:
        print(f"{r['group']}: {r['tests']} tests, {r['test_s']:.0f} s of test time, {r['failures']} failed")
    save("test_groups", {"command": command, **stamp("pytest"), "rows": rows, "wall_s": wall})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    ap.add_argument("--junit", type=Path, help="summarise this whole-suite JUnit report instead of running")
    ap.add_argument("--cpu-report", help="summarise the per-file reports $STUDIO_CPU_REPORT.* of a whole-suite run")
    ap.add_argument("--wall", type=float, help="with --junit or --cpu-report: the whole run's wall time in seconds")
    args = ap.parse_args()
    if args.junit:
        _summarised(from_report(args.junit), "PYTEST_ADDOPTS=--junitxml=REPORT bash .ci/run (clean clone), then "
                                              "python -m bench.test_groups --junit REPORT --wall S", args.wall)
        return
    if args.cpu_report:
        _summarised(from_cpu_reports(args.cpu_report), "STUDIO_CPU_REPORT=PREFIX bash .ci/run (clean clone), then "
                                                       "python -m bench.test_groups --cpu-report PREFIX --wall S", args.wall)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for group in args.groups:
            row = run_group(group, Path(tmp) / f"{group}.xml")
            print(f"{group}: {row['tests']} tests in {row['wall_s']:.0f} s, {row['failures']} failed, "
                  f"{row['skipped']} skipped", flush=True)
            rows.append(row)
    chosen = "" if args.groups == list(GROUPS) else " --groups " + " ".join(args.groups)
    save("test_groups", {"command": "python -m bench.test_groups" + chosen, **stamp("pytest"), "rows": rows,
                         "total_s": round(sum(r["wall_s"] for r in rows), 1)})


if __name__ == "__main__":
    main()
