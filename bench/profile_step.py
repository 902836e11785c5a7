"""Where a training step's time goes, by MindSpore's own profiler (a benchmark that prints figures, not a test).

    .venv/bin/python bench/profile_step.py lenet5 [K]      # or mlp; K steps per graph call (default 8)

The project's TrainStep and MultiStep (Graph mode, Cell style, the process's oneDNN setting for the network) on
random batches of 64: a few calls to compile and warm up, then CALLS calls under `mindspore.profiler.Profiler`.
Prints the time per training step by operator type and the largest operators by layer. The profiler itself
slows the step (~2x here): the shares are what to read, not the absolute times.
Appends to bench/results/profile_step.json (date, versions, machine).
"""
import csv
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.record import stamp  # noqa: E402
from core.runtime import prepare_process  # noqa: E402

NETWORK = sys.argv[1] if len(sys.argv) > 1 else "lenet5"
K = int(sys.argv[2]) if len(sys.argv) > 2 else 8
CALLS = 20
prepare_process(NETWORK)

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402

from core.config import TrainConfig  # noqa: E402
from core.model.evaluation import NetWithLoss  # noqa: E402
from core.model.losses import build_loss  # noqa: E402
from core.model.network_build import training_network  # noqa: E402
from core.networks.lenet5 import cells as lenet5_cells  # noqa: E402
from core.model.optim import build_optimizer  # noqa: E402
from core.training.steps import MultiStep, TrainStep  # noqa: E402


def profiled(out: Path) -> float:
    """Wall ms per training step of CALLS profiled calls."""
    ms.set_context(mode=ms.GRAPH_MODE)
    config = TrainConfig(network=NETWORK)
    net = training_network(config)
    step = TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))
    multi = MultiStep(step.set_train(), K).set_train()
    rng = np.random.default_rng(0)
    pairs = [(ms.Tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
              ms.Tensor(rng.integers(0, 10, 64).astype(np.int32))) for _ in range(K)]
    batches = MultiStep.batches(pairs)
    for _ in range(5):
        multi(*batches)[0].asnumpy()
    profiler = ms.profiler.Profiler(output_path=str(out))
    started = time.perf_counter()
    for _ in range(CALLS):
        multi(*batches)[0].asnumpy()
    wall = (time.perf_counter() - started) / (CALLS * K) * 1000
    profiler.analyse()
    return wall


def by_type(out: Path) -> dict[str, float]:
    with open(next(out.rglob("cpu_op_type_info_0.csv"))) as f:
        return {r["op_type"]: float(r["total_compute_time"]) / (CALLS * K) for r in csv.DictReader(f)}


def by_layer(out: Path) -> dict[str, float]:
    """ms per step by (layer, forward/gradient, operator type), from the operators' full names."""
    totals: Counter = Counter()
    with open(next(out.rglob("cpu_op_detail_info_0.csv"))) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        name = r["full_op_name"]
        layer = re.search(r"(features|classifier)-SequentialCell/(\d+)-(\w+)", name)
        where = f"{layer.group(1)}.{layer.group(2)} {layer.group(3)}" if layer else "outside the layers"
        kind = "gradient" if name.startswith("Gradients") else "forward"
        totals[f"{where}, {kind}, {r['op_type']}"] += float(r["op_total_time(ms)"]) / (CALLS * K)
    return dict(totals.most_common(12))


def main() -> None:
    with tempfile.TemporaryDirectory() as out:
        wall = profiled(Path(out))
        types, layers = by_type(Path(out)), by_layer(Path(out))
    total = sum(types.values())
    print(f"{NETWORK}, K={K}: {wall:.2f} ms per step under the profiler; operators {total:.2f} ms per step")
    for op, t in sorted(types.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {op:36} {t:6.2f} ms  {100 * t / total:5.1f} %")
    print("largest by layer:")
    for name, t in layers.items():
        print(f"  {name:70} {t:6.2f} ms  {100 * t / total:5.1f} %")
    path = Path(__file__).resolve().parent / "results" / "profile_step.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    fast = isinstance(training_network(TrainConfig(network=NETWORK)), lenet5_cells().fast)
    kernels = "project's C++ (core.kernels)" if fast else "MindSpore's"
    print(f"operators: {kernels}")
    rows.append({"network": NETWORK, "k": K, "operators": kernels, "wall_ms_per_step_profiled": round(wall, 2),
                 "ops_ms_per_step": round(total, 2),
                 "share_by_type": {op: round(t / total, 4) for op, t in sorted(types.items(), key=lambda kv: -kv[1])},
                 "largest_by_layer_ms": {k: round(v, 3) for k, v in layers.items()}, **stamp()})
    path.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
