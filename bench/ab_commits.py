"""Two commits side by side: samples/s training the bundled images through the command line (a benchmark
that prints figures, not a test).

    .venv/bin/python -m bench.ab_commits BEFORE [AFTER] [--reps 3] [--epochs 4]

Each commit is checked out in a temporary git worktree (AFTER defaults to HEAD); per round, each network is
trained once by each commit's `python -m core.cli.train` (its defaults, a fresh store), interleaved; samples/s over
the epochs after the first, read from the store; and AFTER / BEFORE per round (the two runs of a round are taken
one after the other, so the machine's drift over the benchmark cancels) with their median. Appends to
bench/results/ab_commits.json (date, versions).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.record import stamp
from bench.teaching_cost import train_once

ROOT = Path(__file__).resolve().parent.parent


def worktree(commit: str, into: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(into), commit], cwd=ROOT, check=True,
                   capture_output=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default="HEAD")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=4)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ab-commits-"))
    trees = {c: worktree(c, work / f"tree{i}") for i, c in enumerate((args.before, args.after))}
    figures: dict[str, dict[str, list[float]]] = {n: {c: [] for c in trees} for n in ("lenet5", "mlp")}
    try:
        for rep in range(args.reps):
            for network, by in figures.items():
                for commit, tree in trees.items():
                    by[commit].append(train_once(tree, network, args.epochs, []))
                    print(f"round {rep + 1} {network:6} {commit:12} {by[commit][-1]:8.0f} samples/s", flush=True)
    finally:
        for tree in trees.values():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    rows = [{"network": n, "commit": c, "median_samples_per_s": round(statistics.median(v)),
             "runs": [round(x) for x in v]} for n, by in figures.items() for c, v in by.items()]
    for r in rows:
        print(f"{r['network']:6} {r['commit']:12} median {r['median_samples_per_s']:8,} {r['runs']}")
    # The machine's speed drifts over a long benchmark: each round's two runs, taken one after the other, are
    # the fair pair. AFTER's samples/s over BEFORE's, per round, and their median.
    before, after = trees
    ratios = {n: [round(a / b, 3) for a, b in zip(by[after], by[before], strict=True)] for n, by in figures.items()}
    for n, r in ratios.items():
        print(f"{n:6} {after} / {before} per round {r}, median {statistics.median(r):.3f}")
    path = ROOT / "bench" / "results" / "ab_commits.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append({"command": "python -m bench.ab_commits " + " ".join(sys.argv[1:]), "rows": rows,
                 "ratios_per_round": ratios,
                 "commits": {c: subprocess.run(["git", "rev-parse", "--short", c], cwd=ROOT, capture_output=True,
                                               text=True).stdout.strip() for c in trees},
                 **stamp(), "epochs": args.epochs, "reps": args.reps})
    path.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
