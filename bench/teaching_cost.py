"""What teaching mode costs in training speed (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.teaching_cost                 # ~4 min on the 2-core machine
    .venv/bin/python -m bench.teaching_cost --before b316074 --reps 3

Trains each network with the command line (worker path: run store, control, recorder) on the bundled images,
in three variants, interleaved round by round (A B C A B C ...) so that machine drift spreads over all:
  before          the code before teaching mode (a git worktree of --before, same Python environment)
  now             this code with teaching mode present but not used (no Step, no slow motion, no lr change)
  now+validate    this code validating every 20 steps as well as after each epoch
Throughput = samples per second of training over the epochs after the first (which compiles), as the run
store records them. Results: bench/results/teaching_cost.json (with date, versions and machine).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
VARIANTS = ("before", "now", "now+validate")


def train_once(tree: Path, network: str, epochs: int, extra: list[str], **env_extra: str) -> float:
    """Samples/s over epochs 2.. of one command-line run of the project in `tree` (env_extra: more environment)."""
    with tempfile.TemporaryDirectory() as store:
        env = dict(os.environ, PYTHONPATH=str(tree), GLOG_v="3", **env_extra)
        command = "core.cli.train" if (tree / "core" / "cli" / "train.py").exists() else "core.train"  # older trees
        p = subprocess.run([sys.executable, "-m", command, "--network", network, "--epochs", str(epochs),
                            "--store", store, *extra], cwd=tree, env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"{tree}: {command} {network} {extra} failed:\n{p.stderr[-2000:]}")
        sys.path.insert(0, str(ROOT))
        from core.runs.store import RunStore  # the current store reads (and upgrades) the older one
        s = RunStore(store)
        epochs_ = s.epochs(s.list_runs()[0].id)[1:]
        samples = sum(e.samples_per_s * e.epoch_seconds for e in epochs_)
        return samples / sum(e.epoch_seconds for e in epochs_)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="b316074", help="the commit before teaching mode (default b316074)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="teaching-cost-"))
    before = work / "before"
    subprocess.run(["git", "worktree", "add", "--detach", str(before), args.before], cwd=ROOT, check=True,
                   capture_output=True)
    trees = {"before": (before, []), "now": (ROOT, []), "now+validate": (ROOT, ["--validate-every", "20"])}
    figures: dict[str, dict[str, list[float]]] = {n: {v: [] for v in VARIANTS} for n in ("lenet5", "mlp")}
    try:
        for rep in range(args.reps):
            for network in figures:
                for variant in VARIANTS:
                    tree, extra = trees[variant]
                    figures[network][variant].append(train_once(tree, network, args.epochs, extra))
                    print(f"rep {rep + 1} {network:6} {variant:13} {figures[network][variant][-1]:8.0f} samples/s",
                          flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT, capture_output=True)
    report(figures, args)


def report(figures: dict, args) -> None:
    rows = []
    print(f"\n{'network':8} {'variant':14} {'median samples/s':>17} {'vs before':>10}")
    for network, by_variant in figures.items():
        base = statistics.median(by_variant["before"])
        for variant, values in by_variant.items():
            med = statistics.median(values)
            rows.append({"network": network, "variant": variant, "median_samples_per_s": round(med),
                         "runs": [round(v) for v in values], "vs_before": round(med / base, 3)})
            print(f"{network:8} {variant:14} {med:17,.0f} {med / base:10.3f}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {"command": "python -m bench.teaching_cost " + " ".join(sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "numpy")},
           "before": args.before, "epochs": args.epochs, "reps": args.reps, "rows": rows}
    (RESULTS / "teaching_cost.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwritten: {RESULTS / 'teaching_cost.json'}")


if __name__ == "__main__":
    main()
