"""What a graph call costs beyond its steps: 70 training steps taken as calls of K steps for several K,
alternated in one process (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.calls_per_epoch mlp [--ks 7,14,35,1] [--rounds 40]

One network (the project's TrainStep and MultiStep, Graph mode, Cell style, the process's settings for the
network) per K, all from the same initial weights, on the same 70 random batches of 64; round by round each K
takes its 70 steps (70/K calls), so the machine's drift falls on every K alike. Prints the median time per 70
steps, each K's median ratio to the first K's, and the cost per call that the first two K imply. Writes
bench/results/calls_per_epoch-<network>.json (date, versions, machine).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.record import save, stamp  # noqa: E402
from core.runtime import prepare_process  # noqa: E402

STEPS = 70


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("network", choices=("lenet5", "mlp"))
    ap.add_argument("--ks", default="7,14,35,1", help="K values, comma-separated, each dividing 70")
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    if any(STEPS % k for k in ks):
        ap.error(f"every K must divide {STEPS}")
    prepare_process(args.network)
    graphs = {k: prepared(args.network, k) for k in ks}
    times: dict[int, list[float]] = {k: [] for k in ks}
    for _ in range(args.rounds):
        for k, run in graphs.items():
            started = time.perf_counter()
            run()
            times[k].append((time.perf_counter() - started) * 1e3)
    rows = []
    for k in ks:
        ratios = [t / base for t, base in zip(times[k], times[ks[0]], strict=True)]
        rows.append({"k": k, "calls": STEPS // k, "median_ms": round(statistics.median(times[k]), 2),
                     "median_ratio": round(statistics.median(ratios), 3),
                     "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)]})
        print(f"K = {k:2}: {STEPS // k:2} calls, {rows[-1]['median_ms']:6.1f} ms per {STEPS} steps, "
              f"{rows[-1]['median_ratio']:.3f}x K = {ks[0]}'s (rounds {min(ratios):.2f}-{max(ratios):.2f})")
    a, b = rows[0], rows[1]
    per_call = (a["median_ms"] - b["median_ms"]) / (a["calls"] - b["calls"]) if a["calls"] != b["calls"] else None
    if per_call is not None:
        print(f"a call's cost beyond its steps, from K = {a['k']} and {b['k']}: {per_call:.2f} ms")
    save(f"calls_per_epoch-{args.network}", {"command": "python -m bench.calls_per_epoch " + " ".join(sys.argv[1:]),
                                             **stamp(), "steps": STEPS, "rounds": args.rounds, "rows": rows,
                                             "ms_per_call": per_call and round(per_call, 2)})


def prepared(network: str, k: int):
    """A function that takes STEPS training steps as calls of k (compiled and warmed up here)."""
    import mindspore as ms
    import numpy as np

    from core.config import TrainConfig
    from core.model.evaluation import NetWithLoss
    from core.model.losses import build_loss
    from core.model.network_build import training_network
    from core.model.optim import build_optimizer
    from core.training.steps import MultiStep, TrainStep
    ms.set_context(mode=ms.GRAPH_MODE)
    config = TrainConfig(network=network)
    ms.set_seed(1)
    net = training_network(config)
    step = TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))
    step.set_train()
    rng = np.random.default_rng(0)
    batches = [(ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
                ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))) for _ in range(STEPS)]
    if k == 1:
        def run():
            for data, label in batches:
                step(data, label)[0].asnumpy()
    else:
        multi = MultiStep(step, k).set_train()
        calls = [MultiStep.batches(batches[i:i + k]) for i in range(0, STEPS, k)]

        def run():
            for xs, ys in calls:
                multi(xs, ys)[0].asnumpy()
    run()  # compiles
    return run


if __name__ == "__main__":
    main()
