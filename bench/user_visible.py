"""What a user sees: samples per second training the bundled images, pipeline included, through the dashboard
path (the command line: worker code, run store, control), side by side with PyTorch eager on the same images
(a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.user_visible --torch-python /path/to/python-with-torch [--reps 3] [--epochs 4]

Variants, interleaved round by round: the project with its defaults; the project with one step per graph call
(steps_per_call=1, as before K steps per call); PyTorch 2.x eager (bench/torch_epochs.py: the images decoded
once into tensors, same network, SGD momentum, batch 64). Throughput over the epochs after the first.
Results: bench/results/user_visible.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from bench.teaching_cost import train_once

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def torch_once(python: str, network: str, epochs: int) -> tuple[float, str]:
    p = subprocess.run([python, "torch_epochs.py", "--network", network, "--epochs", str(epochs)],
                       cwd=ROOT / "bench", capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"torch_epochs.py failed:\n{p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return out["samples_per_s"], out["torch"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON"), help="a Python that has torch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=4)
    args = ap.parse_args()
    variants = {"project": [], "project, 1 step per call": ["--steps-per-call", "1"]}
    figures = {n: {v: [] for v in [*variants, "pytorch"]} for n in ("lenet5", "mlp")}
    torch_version = None
    for rep in range(args.reps):
        for network, by in figures.items():
            for variant, extra in variants.items():
                by[variant].append(train_once(ROOT, network, args.epochs, extra))
                print(f"rep {rep + 1} {network:6} {variant:26} {by[variant][-1]:8.0f} samples/s", flush=True)
            if args.torch_python:
                value, torch_version = torch_once(args.torch_python, network, args.epochs)
                by["pytorch"].append(value)
                print(f"rep {rep + 1} {network:6} {'pytorch':26} {value:8.0f} samples/s", flush=True)
    rows = []
    print(f"\n{'network':8} {'variant':28} {'samples/s':>10} {'time per sample vs PyTorch':>27}")
    for network, by in figures.items():
        torch_med = statistics.median(by["pytorch"]) if by["pytorch"] else None
        for variant, values in by.items():
            if not values:
                continue
            med = statistics.median(values)
            ratio = torch_med / med if torch_med else None
            rows.append({"network": network, "variant": variant, "median_samples_per_s": round(med),
                         "runs": [round(v) for v in values], "time_per_sample_vs_pytorch": ratio and round(ratio, 2)})
            print(f"{network:8} {variant:28} {med:10,.0f} {ratio and f'{ratio:.2f}x' or '-':>27}")
    out = {"command": "python -m bench.user_visible " + " ".join(sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "numpy")},
           "torch": torch_version, "epochs": args.epochs, "reps": args.reps, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "user_visible.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwritten: {RESULTS / 'user_visible.json'}")


if __name__ == "__main__":
    main()
