"""Other formulations of LeNet-5's two slowest kernels, timed against the project's (a benchmark that prints
figures, not a test). MindSpore's profiler (bench/profile_step.py) puts most of a LeNet-5 step in the first
convolution's filter gradient (oneDNN's GEMM-based backward-weights on a 1-channel input) and in MaxPoolGrad
(oneDNN's plain NCHW pooling). Each alternative (bench/alt_layers.py) computes the same function:

    .venv/bin/python bench/kernel_alternatives.py [--rounds 3]

K = 8 steps per call (the project's MultiStep), random batches of 64, every variant built first, then timed in
interleaved rounds; also the largest weight difference to the project's after the same steps.
Appends to bench/results/kernel_alternatives.json (date, versions, machine).
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.runtime import prepare_process  # noqa: E402

prepare_process("lenet5")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402

from bench import alt_layers  # noqa: E402
from bench.record import stamp  # noqa: E402
from core.config import TrainConfig  # noqa: E402
from core.model.evaluation import NetWithLoss  # noqa: E402
from core.model.losses import build_loss  # noqa: E402
from core.model.optim import build_optimizer  # noqa: E402
from core.training.steps import MultiStep, TrainStep  # noqa: E402

VARIANTS = [("Conv1", "MaxPool"), ("Conv1Im2col", "MaxPool"), ("Conv1", "MaxPoolArgmax"), ("Conv1", "MaxPoolReduce")]
K, CALLS = 8, 20


def build(conv: str, pool: str):
    ms.set_seed(1)
    config = TrainConfig(network="lenet5")
    net = alt_layers.LeNet5With(getattr(alt_layers, conv), getattr(alt_layers, pool))
    step = TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))
    return net, MultiStep(step.set_train(), K).set_train()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE)
    rng = np.random.default_rng(0)
    calls = [MultiStep.batches([(ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
                                 ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))) for _ in range(K)])
             for _ in range(CALLS)]
    built = {v: build(*v) for v in VARIANTS}
    for _, multi in built.values():
        multi(*calls[0])[0].asnumpy()  # compile
    times = {v: [] for v in VARIANTS}
    for _ in range(args.rounds):
        for v, (_, multi) in built.items():
            started = time.perf_counter()
            for batches in calls:
                multi(*batches)[0].asnumpy()
            times[v].append((time.perf_counter() - started) / (CALLS * K) * 1000)
    ref = [p.asnumpy() for p in built[VARIANTS[0]][0].get_parameters()]
    rows = []
    for v, (net, _) in built.items():
        diff = max(float(np.abs(p.asnumpy() - r).max()) for p, r in zip(net.get_parameters(), ref, strict=False))
        rows.append({"conv1": v[0], "pool": v[1], "ms_per_step_median": round(float(np.median(times[v])), 2),
                     "rounds": [round(t, 2) for t in times[v]], "max_weight_difference": diff})
        print(f"{v[0]:12} {v[1]:14} {np.median(times[v]):7.2f} ms/step (rounds {rows[-1]['rounds']}), "
              f"largest weight difference {diff:.2g}")
    path = Path(__file__).resolve().parent / "results" / "kernel_alternatives.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append({"rows": rows, **stamp()})
    path.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
