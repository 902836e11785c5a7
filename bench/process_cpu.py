"""Where a command's CPU goes, by kind of process: Chromium's renderers, the tests' pytest workers, the app
servers, training processes, PostgreSQL, ... (a benchmark that prints figures, not a test).

    (source scripts/setup_venv.sh requirements-dev.txt)            # a clean clone's .venv, made first
    CI=true .venv/bin/python -m bench.process_cpu --name ci -- bash .ci/run    # then the whole CI, measured
    .venv/bin/python -m bench.process_cpu --name phase2 -- ./test.sh -n 2 --dist loadfile tests/browser

Every `--every` seconds (0.5) it reads each process's CPU (user + system, all its threads) from /proc, for the
whole machine: the suite's processes outlive their parents (a run's worker, a Chromium) and would escape a
process tree. A process's time after its last reading is not counted (at most one interval each), and one that
lives less than an interval may be missed; the machine's busy and idle seconds (/proc/stat) over the command say
how much of the work the kinds account for. Results: bench/results/process_cpu[-NAME].json, with the command's
exit status; docs/testing.md says what the figures showed.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")

# (kind, pattern searched in "comm<TAB>command line"), the first that matches names a process's kind
KINDS: tuple[tuple[str, str], ...] = (
    ("Chromium renderer", r"chrom.*--type=renderer"),
    ("Chromium GPU process", r"chrom.*--type=gpu-process"),
    ("Chromium, other", r"chrom"),
    ("Playwright's Node driver", r"playwright/driver/node"),
    ("Node, other", r"^node"),
    ("pytest worker (xdist)", r"import sys;exec\(eval\(sys\.stdin"),
    ("pytest", r"-m pytest"),
    ("app server (ui.serve)", r"-m ui\.serve"),
    ("warm worker (training)", r"-m core\.cli\.warm_worker"),
    ("run worker (training)", r"-m core\.cli\.worker"),
    ("command-line training", r"-m core\.cli\.train"),
    ("data-parallel rank", r"rank\.py|msrun"),
    ("other core.cli command", r"-m core\.cli\."),
    ("example script", r"/examples/"),
    ("Dask", r"dask"),
    ("mypy", r"-m mypy"),
    ("PostgreSQL", r"postgres"),
    ("nginx", r"nginx"),
    ("g++", r"^(cc1plus|g\+\+|as|ld|collect2)\t"),
    ("other Python", r"python"),
)


def kind_of(comm: str, command_line: str) -> str:
    """The kind a process counts under, by its name and command line (KINDS); a kernel thread has no command
    line and counts as "kernel: NAME"."""
    if not command_line:
        return f"kernel: {comm}"
    text = f"{comm}\t{command_line}"
    return next((kind for kind, pattern in KINDS if re.search(pattern, text)), f"other: {comm}")


@dataclass
class Seen:
    kind: str
    cpu_s: float = 0.0


def _read(pid: str) -> tuple[str, float, str] | None:
    """(comm, CPU seconds, start ticks) of one process, None if it has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
    return comm, (int(rest[11]) + int(rest[12])) / TICKS, rest[19]


def _command_line(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def sample(seen: dict[tuple[str, str], Seen]) -> None:
    """One reading of every process: each one's CPU so far, under (pid, start) so that a reused pid is new. Read
    from /proc by hand rather than through psutil so that a process's command line is read once, when it is first
    seen: the sampler runs beside what it measures and must cost little."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        read = _read(pid)
        if read is None:
            continue
        comm, cpu_s, start = read
        row = seen.get((pid, start))
        if row is None:
            row = seen[(pid, start)] = Seen(kind_of(comm, _command_line(pid)))
        row.cpu_s = cpu_s


def machine_seconds() -> tuple[float, float]:
    """The machine's (busy, idle) CPU seconds since boot (/proc/stat's first line; iowait counts as idle)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / TICKS, idle / TICKS


def measure(command: list[str], every: float) -> dict:
    """Run the command, reading every process each `every` seconds; the figures by kind."""
    seen: dict[tuple[str, str], Seen] = {}
    sample(seen)
    before = {key: row.cpu_s for key, row in seen.items()}  # what ran before the command: only its increase counts
    (busy0, idle0), began = machine_seconds(), time.monotonic()
    proc = subprocess.Popen(command)
    while proc.poll() is None:
        sample(seen)
        time.sleep(every)
    sample(seen)
    (busy1, idle1), wall = machine_seconds(), time.monotonic() - began
    kinds: dict[str, dict] = {}
    for key, row in seen.items():
        cpu_s = row.cpu_s - before.get(key, 0.0)
        if cpu_s > 0:
            entry = kinds.setdefault(row.kind, {"kind": row.kind, "processes": 0, "cpu_s": 0.0})
            entry["processes"] += 1
            entry["cpu_s"] += cpu_s
    rows = sorted(kinds.values(), key=lambda r: -r["cpu_s"])
    for r in rows:
        r["cpu_s"] = round(r["cpu_s"], 1)
    return {"command": " ".join(command), "exit_status": proc.returncode, "wall_s": round(wall, 1),
            "machine_busy_s": round(busy1 - busy0, 1), "machine_idle_s": round(idle1 - idle0, 1),
            "counted_s": round(sum(r["cpu_s"] for r in rows), 1), "every_s": every, "kinds": rows}


def report(figures: dict) -> str:
    lines = [f"{figures['command']}: exit status {figures['exit_status']}, {figures['wall_s']:.0f} s wall; the machine "
             f"{figures['machine_busy_s']:.0f} CPU-s busy, {figures['machine_idle_s']:.0f} idle; counted by process "
             f"{figures['counted_s']:.0f}", f"{'CPU-s':>8} {'share':>6} {'procs':>6}  kind"]
    for r in figures["kinds"]:
        share = r["cpu_s"] / figures["machine_busy_s"] if figures["machine_busy_s"] else 0.0
        lines.append(f"{r['cpu_s']:8.1f} {share:6.1%} {r['processes']:6d}  {r['kind']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=float, default=0.5, help="seconds between readings of /proc")
    ap.add_argument("--name", help="results go to bench/results/process_cpu-NAME.json")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("name the command to measure after --, e.g. -- bash .ci/run")
    figures = measure(command, args.every)
    print(report(figures))
    save("process_cpu" + (f"-{args.name}" if args.name else ""), {**stamp(), **figures})
    sys.exit(figures["exit_status"])


if __name__ == "__main__":
    main()
