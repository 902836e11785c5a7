"""What a user sees: samples per second training the bundled images, pipeline included, through the dashboard
path (the command line: worker code, run store, control), side by side with PyTorch eager on the same images
(a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.user_visible --torch-python /path/to/python-with-torch [--reps 3] [--epochs 4]

Variants, interleaved round by round: the project with its defaults and a warm worker's K steps per call; the
project with one step per graph call (steps_per_call=1, as before K steps per call); LeNet-5 with MindSpore's own operators instead of the project's
C++ ones (STUDIO_CUSTOM_KERNELS=0); the plain seed script (bench/reference.py, the tutorials' loop,
same network, loss and optimizer) with the project's oneDNN setting and with MindSpore's own; PyTorch 2.x eager (bench/torch_epochs.py: the images decoded
once into tensors, same network, SGD momentum, batch 64). Throughput over the epochs after the first.
Results: bench/results/user_visible.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from bench.teaching_cost import train_once
from bench.cases import PRESETS, env_for, reference_preset
from core.config import TrainConfig
from core.data.folders import stratified_split
from core.data.idx import read_labels
from core.networks import network_spec

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BUNDLED_TRAIN = ROOT / "data" / "mnist-5k" / "train"


def torch_once(python: str, network: str, epochs: int) -> tuple[float, str]:
    p = subprocess.run([python, "torch_epochs.py", "--network", network, "--epochs", str(epochs)],
                       cwd=ROOT / "bench", capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"torch_epochs.py failed:\n{p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return out["samples_per_s"], out["torch"]


def plain_once(network: str, epochs: int, project_settings: bool) -> float:
    """Samples/s over epochs 2.. of the plain seed script (bench/reference.py: MnistDataset -> TrainOneStepCell ->
    a tuple iterator) on the bundled 5,000 training images; with the project's oneDNN setting for the network
    (project_settings) or with MindSpore's own."""
    env = env_for(reference_preset(network) if project_settings else PRESETS["mindspore-default"])
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "reference.py"), "--network", network,
                        "--epochs", str(epochs)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"reference.py {network} failed:\n{p.stderr[-2000:]}")
    marks = json.loads(p.stdout.strip().splitlines()[-1])["marks"]
    per_epoch = len(marks) // epochs
    return (epochs - 1) * images_in(BUNDLED_TRAIN) / (marks[-1] - marks[per_epoch - 1])


def prepared_k(network: str) -> int:
    """The K of a warm worker's model of the network (compiled before Start) on the bundled images: the steady
    speed of the app's default run. A command line's run this short compiles no K-step graph
    (TrainConfig.steps_per_call_for), which shortens the run but not its later epochs."""
    config = TrainConfig(network=network)
    labels = read_labels(BUNDLED_TRAIN / "train-labels-idx1-ubyte")
    trained = len(stratified_split(labels, config.val_fraction)[0])  # the split a run makes
    return config.steps_per_call_for(False, math.ceil(trained / config.batch_size), compiled_ahead=True)


def images_in(folder: Path) -> int:
    """The image count in an MNIST folder's training images file (its IDX header)."""
    header = (folder / "train-images-idx3-ubyte").read_bytes()[:8]
    return int.from_bytes(header[4:8], "big")


VARIANTS = {  # name -> how one measurement of it is taken (network, epochs) -> samples/s
    "project": lambda n, e: train_once(ROOT, n, e, ["--steps-per-call", str(prepared_k(n))]),
    "project, 1 step per call": lambda n, e: train_once(ROOT, n, e, ["--steps-per-call", "1"]),
    "project, MindSpore's operators": lambda n, e: train_once(ROOT, n, e, [], STUDIO_CUSTOM_KERNELS="0"),
    "plain script, project's oneDNN setting": lambda n, e: plain_once(n, e, True),
    "plain script, MindSpore's defaults": lambda n, e: plain_once(n, e, False),
}


def measure(reps: int, epochs: int, torch_python: str | None) -> tuple[dict, str | None]:
    """Every variant of every network, round by round (interleaved); PyTorch when a Python with torch is given."""
    figures = {n: {v: [] for v in [*VARIANTS, "pytorch"]} for n in ("lenet5", "mlp")}
    torch_version = None
    for rep in range(reps):
        for network, by in figures.items():
            for variant, once in VARIANTS.items():
                if variant == "plain script, MindSpore's defaults" and not network_spec(network).onednn_isa:
                    continue  # the project sets nothing for this network: the same as the line above
                if variant == "project, MindSpore's operators" and network != "lenet5":
                    continue  # custom operators are LeNet-5's only: the same as "project"
                by[variant].append(once(network, epochs))
                print(f"rep {rep + 1} {network:6} {variant:40} {by[variant][-1]:8.0f} samples/s", flush=True)
            if torch_python:
                value, torch_version = torch_once(torch_python, network, epochs)
                by["pytorch"].append(value)
                print(f"rep {rep + 1} {network:6} {'pytorch':40} {value:8.0f} samples/s", flush=True)
    return figures, torch_version


def table(figures: dict) -> list[dict]:
    rows = []
    print(f"\n{'network':8} {'variant':42} {'samples/s':>10} {'time per sample vs PyTorch':>27}")
    for network, by in figures.items():
        torch_med = statistics.median(by["pytorch"]) if by["pytorch"] else None
        for variant, values in by.items():
            if not values:
                continue
            med = statistics.median(values)
            ratio = torch_med / med if torch_med else None
            rows.append({"network": network, "variant": variant, "median_samples_per_s": round(med),
                         "runs": [round(v) for v in values], "time_per_sample_vs_pytorch": ratio and round(ratio, 2)})
            print(f"{network:8} {variant:42} {med:10,.0f} {ratio and f'{ratio:.2f}x' or '-':>27}")
    return rows


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON"), help="a Python that has torch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=4)
    args = ap.parse_args(argv)
    figures, torch_version = measure(args.reps, args.epochs, args.torch_python)
    out = {"command": "python -m bench.user_visible " + " ".join(sys.argv[1:] if argv is None else argv),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "python": platform.python_version(), "versions": {p: version(p) for p in ("mindspore", "numpy")},
           "torch": torch_version, "epochs": args.epochs, "reps": args.reps, "rows": table(figures)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "user_visible.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwritten: {RESULTS / 'user_visible.json'}")
    return out


if __name__ == "__main__":
    main()
