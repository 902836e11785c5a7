"""The MLP's matrix products inside a training step, MindSpore's against PyTorch's (a benchmark that prints
figures, not a test).

    .venv/bin/python -m bench.mlp_matmuls --torch-python /path/to/python-with-torch [--reps 3]

MindSpore: the project's K-step training graph of the 784-512-512-10 MLP (Graph mode, Cell style, batch 64,
the MLP's process settings) with ONEDNN_VERBOSE=1; its MatMuls run on oneDNN, which prints each execution's time,
grouped here by the product's shape. PyTorch: the same products, each timed alone in a loop (its profiler
inflates them ~2x; layer 2's forward and input gradient, one shape, are timed once and counted twice); its `@`
runs on MKL. Each side runs in its own process, rounds alternate; the figures are medians of the per-round
medians, per product times how often a step takes it, and their sum per step. Results:
bench/results/mlp_matmuls.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.record import save, stamp  # noqa: E402

CALLS = 30  # K-step calls timed (after 3 to compile and warm up)

MINDSPORE_SIDE = r'''
import numpy as np
from core.runtime import prepare_process
prepare_process("mlp")
import mindspore as ms
ms.set_context(mode=ms.GRAPH_MODE)
from core.config import TrainConfig
from core.training.build import build_model, seed_run
from core.training.steps import MultiStep
config = TrainConfig(network="mlp")
seed_run(config, 0)
model = build_model(config, None, None, 71)
rng = np.random.default_rng(0)
group = [(ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
          ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))) for _ in range(model.step.k)]
for _ in range(3):
    model.step.multi(*MultiStep.batches(group))[0].asnumpy()
print("TIMED", model.step.k, flush=True)
for _ in range(CALLS):
    model.step.multi(*MultiStep.batches(group))[0].asnumpy()
'''

TORCH_SIDE = r'''
import json, statistics, time, torch
torch.manual_seed(0)
r = torch.randn
x, h, dy, dy2 = r(64, 784), r(64, 512), r(64, 512), r(64, 10)
w0, w1, w2 = r(512, 784), r(512, 512), r(10, 512)
products = {  # oneDNN's name of each product of the step (src MxK : weights KxN) -> the same product in PyTorch
    "64x784:784x512": lambda: x @ w0.t(), "64x512:512x512": lambda: h @ w1.t(), "64x512:512x10": lambda: h @ w2.t(),
    "512x64:64x784": lambda: dy.t() @ x, "512x64:64x512": lambda: dy.t() @ h, "10x64:64x512": lambda: dy2.t() @ h,
    "64x10:10x512": lambda: dy2 @ w2}
times = {}
for name, product in products.items():
    for _ in range(10):
        product()
    runs = []
    for _ in range(STEPS):
        started = time.perf_counter()
        product()
        runs.append((time.perf_counter() - started) * 1000)
    times[name] = runs
print(json.dumps({"ms": times, "torch": torch.__version__}))
'''


def mindspore_round() -> tuple[dict[str, list[float]], int]:
    """oneDNN's execution times (ms) of the MatMuls in CALLS K-step calls, by shape (src MxK:KxN), and K."""
    env = dict(os.environ, ONEDNN_VERBOSE="1", PYTHONPATH=str(ROOT), GLOG_v="3")
    p = subprocess.run([sys.executable, "-c", MINDSPORE_SIDE.replace("CALLS", str(CALLS))], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    times: dict[str, list[float]] = defaultdict(list)
    k_line, timed = p.stdout.split("TIMED ", 1)[1].split("\n", 1)
    for line in timed.splitlines():
        fields = line.split(",")
        if line.startswith("onednn_verbose") and "exec" in fields and "matmul" in fields:
            times[fields[-2]].append(float(fields[-1]))
    return times, int(k_line)


def torch_round(python: str, steps: int) -> tuple[dict[str, list[float]], str]:
    p = subprocess.run([python, "-c", TORCH_SIDE.replace("STEPS", str(steps))], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return out["ms"], out["torch"]


def per_step(times: dict[str, list[float]], per_step_count: dict[str, int]) -> dict[str, float]:
    """Each shape's median time times how often a step takes it."""
    return {shape: round(statistics.median(t) * per_step_count[shape], 4) for shape, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", required=True, help="a Python that has torch")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    rounds: dict[str, list[dict[str, float]]] = {"mindspore": [], "pytorch": []}
    torch_version = ""
    for rep in range(args.reps):
        ms_times, k = mindspore_round()
        steps = CALLS * k
        count = {shape: round(len(t) / steps) for shape, t in ms_times.items()}
        rounds["mindspore"].append(per_step(ms_times, count))
        torch_times, torch_version = torch_round(args.torch_python, steps)
        rounds["pytorch"].append(per_step(torch_times, count))
        print(f"round {rep + 1}: MindSpore {sum(rounds['mindspore'][-1].values()):.3f} ms, PyTorch "
              f"{sum(rounds['pytorch'][-1].values()):.3f} ms of matrix products per step", flush=True)
    summary = {side: {shape: statistics.median(r[shape] for r in rs) for shape in rs[0]} for side, rs in rounds.items()}
    for side, shapes in summary.items():
        print(f"{side}: " + ", ".join(f"{s} {t:.3f}" for s, t in sorted(shapes.items())) +
              f" — {sum(shapes.values()):.3f} ms per step")
    save("mlp_matmuls", {"command": f"python -m bench.mlp_matmuls --torch-python … --reps {args.reps}",
                         **stamp(), "torch": torch_version, "reps": args.reps,
                         "ms_per_step_by_shape": summary, "rounds": rounds,
                         "sum_ms_per_step": {side: round(sum(s.values()), 3) for side, s in summary.items()}})


if __name__ == "__main__":
    main()
