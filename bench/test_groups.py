"""The test suite's time per group (tests/unit, process, browser, reliability), so its growth is visible: each group
run on its own, one after another, as `./test.sh -m GROUP` runs it; its wall time, its test count and outcome,
and its slowest files.

    .venv/bin/python -m bench.test_groups                 # the whole suite, one group at a time (~40 min here)
    .venv/bin/python -m bench.test_groups --groups unit   # one group

Results: bench/results/test_groups.json (a benchmark, not a test: nothing here passes or fails on a time).
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    args = ap.parse_args()
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
