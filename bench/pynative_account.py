"""Why PyNative trains slower than Graph mode here: the smallest repro and the account (a benchmark that prints
figures, not a test).

    .venv/bin/python -m bench.pynative_account [--reps 3]

Three measurements, each mode in its own fresh process (the mode and oneDNN's settings are per process),
interleaved Graph, PyNative, Graph, ... and reported as medians:
1. **The smallest repro: one operator.** N additions of two (64, 10) float32 tensors, one after another: in
   PyNative a Python loop (each `ops.add` dispatched from Python, as the tutorial's PyNative loop does), in Graph
   mode the same loop compiled once by `ms.jit` into one graph. Per operator: the dispatch cost of PyNative,
   with nearly no arithmetic in it.
2. **The operators a training step launches**: MindSpore's profiler over STEPS PyNative steps of the studio's
   own train step (Cell style, batch 64); the kernel launches per step, by the profiler's own count.
3. **A training step** (the studio's TrainStep, Cell style, random batches of 64, after warm-up): PyNative one
   step per call; Graph one step per call; Graph K steps per call (what the studio runs, core/training/steps.py
   MultiStep, K = 8).
The account: PyNative's step ≈ Graph's one-step call + the launches per step × PyNative's cost per launch.
Results: bench/results/pynative_account.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402

N_ADDS = 400
STEPS = 60       # timed training steps per measurement (after WARM_UP)
WARM_UP = 10
K = 8
PROFILED_STEPS = 10


def _child(kind: str, network: str, mode: str) -> dict:
    """One measurement in this (fresh) process."""
    from core.runtime import prepare_process, set_mode
    prepare_process(network)
    import mindspore as ms
    import numpy as np
    set_mode(mode)
    if kind == "add":
        return {"us_per_op": _adds(ms, np, mode)}
    if kind == "step":
        return _step_times(ms, np, network, mode)
    if kind == "launches":
        return {"launches_per_step": _launches(ms, np, network)}
    raise ValueError(kind)


def _adds(ms, np, mode: str) -> float:
    ops = ms.ops
    x0 = ms.Tensor(np.zeros((64, 10), np.float32))
    y = ms.Tensor(np.full((64, 10), 1e-3, np.float32))

    def chain(x, y):
        for _ in range(N_ADDS):
            x = ops.add(x, y)
        return x

    run = ms.jit(chain) if mode == "graph" else chain
    for _ in range(3):
        run(x0, y).asnumpy()
    times = []
    for _ in range(5):
        started = time.perf_counter()
        run(x0, y).asnumpy()
        times.append((time.perf_counter() - started) / N_ADDS * 1e6)
    return statistics.median(times)


def _train_step(ms, network: str):
    from core.config import TrainConfig
    from core.model.evaluation import NetWithLoss
    from core.model.losses import build_loss
    from core.model.network_build import training_network
    from core.model.optim import build_optimizer
    from core.training.steps import TrainStep
    config = TrainConfig(network=network)
    net = training_network(config)
    return TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))


def _batches(ms, np, n: int):
    rng = np.random.default_rng(0)
    return [(ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
             ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))) for _ in range(n)]


def _step_times(ms, np, network: str, mode: str) -> dict:
    """ms per training step: one step per call, and (Graph) K steps per call."""
    from core.training.steps import MultiStep
    step = _train_step(ms, network).set_train()
    pairs = _batches(ms, np, K)
    out = {}
    for _ in range(WARM_UP):
        step(*pairs[0])[0].asnumpy()
    started = time.perf_counter()
    for i in range(STEPS):
        step(*pairs[i % K])[0].asnumpy()
    out["ms_per_step_one_per_call"] = (time.perf_counter() - started) / STEPS * 1000
    if mode == "graph":
        multi = MultiStep(step, K).set_train()
        batches = MultiStep.batches(pairs)
        for _ in range(3):
            multi(*batches)[0].asnumpy()
        calls = max(STEPS // K, 1)
        started = time.perf_counter()
        for _ in range(calls):
            multi(*batches)[0].asnumpy()
        out["ms_per_step_k_per_call"] = (time.perf_counter() - started) / (calls * K) * 1000
    return out


def _launches(ms, np, network: str) -> float:
    """Kernel launches per PyNative training step, by MindSpore's profiler."""
    step = _train_step(ms, network).set_train()
    pairs = _batches(ms, np, 1)
    for _ in range(WARM_UP):
        step(*pairs[0])[0].asnumpy()
    with tempfile.TemporaryDirectory(prefix="pynative-profile-") as out:
        profiler = ms.profiler.Profiler(output_path=out)
        for _ in range(PROFILED_STEPS):
            step(*pairs[0])[0].asnumpy()
        profiler.analyse()
        found = list(Path(out).rglob("cpu_op_detail_info_0.csv"))
        if not found:
            raise RuntimeError(f"MindSpore's profiler wrote no cpu_op_detail_info_0.csv under {out}")
        with open(found[0]) as f:
            rows = list(csv.DictReader(f))
        calls = sum(float(r.get("op_occurrences") or r.get("op_count") or 1) for r in rows)
    return calls / PROFILED_STEPS


def _measure(kind: str, network: str, mode: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "bench.pynative_account", "--child", kind, network, mode],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{kind} {network} {mode} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1])


def _median(rows: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", nargs=3, metavar=("KIND", "NETWORK", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)), flush=True)
        return {}
    adds: dict[str, list[dict]] = {"graph": [], "pynative": []}
    steps: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):
        for mode in ("graph", "pynative"):
            adds[mode].append(_measure("add", "mlp", mode))
            for network in ("lenet5", "mlp"):
                steps.setdefault((network, mode), []).append(_measure("step", network, mode))
    dispatch = {m: _median(adds[m], "us_per_op") for m in adds}
    rows = []
    for network in ("lenet5", "mlp"):
        launches = _measure("launches", network, "pynative")["launches_per_step"]
        graph, pynative = steps[(network, "graph")], steps[(network, "pynative")]
        row = {"network": network, "launches_per_step": round(launches, 1),
               "pynative_ms": _median(pynative, "ms_per_step_one_per_call"),
               "graph_one_per_call_ms": _median(graph, "ms_per_step_one_per_call"),
               "graph_k_per_call_ms": _median(graph, "ms_per_step_k_per_call")}
        row["launch_cost_ms"] = round(launches * (dispatch["pynative"] - dispatch["graph"]) / 1000, 3)
        row["predicted_pynative_ms"] = round(row["graph_one_per_call_ms"] + row["launch_cost_ms"], 3)
        row["pynative_vs_graph_k"] = round(row["pynative_ms"] / row["graph_k_per_call_ms"], 2)
        row["pynative_vs_graph_one"] = round(row["pynative_ms"] / row["graph_one_per_call_ms"], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = {"command": f"python -m bench.pynative_account --reps {args.reps}", **stamp(),
           "n_adds": N_ADDS, "k": K, "reps": args.reps, "us_per_add": dispatch,
           "runs": {"adds": adds, "steps": {f"{n} {m}": v for (n, m), v in steps.items()}}, "rows": rows}
    print(f"one operator: PyNative {dispatch['pynative']} us, Graph {dispatch['graph']} us")
    save("pynative_account", out)
    return out


if __name__ == "__main__":
    main()
