"""K training steps per graph call, alone: no pipeline, random batches, the project's TrainStep and MultiStep
(Graph mode, Cell style). Prints the warm time per step with one step per call and with K per call, and
whether both trained the same weights bit for bit. One run is indicative only (±15 % on this machine).

    .venv/bin/python bench/kstep_alone.py lenet5 8
    ONEDNN_MAX_CPU_ISA=AVX512_CORE .venv/bin/python bench/kstep_alone.py lenet5 8    # another oneDNN cap
"""
import json
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.runtime import prepare_process  # noqa: E402

NETWORK = sys.argv[1] if len(sys.argv) > 1 else "lenet5"
K = int(sys.argv[2]) if len(sys.argv) > 2 else 8
prepare_process(NETWORK)

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402

from core.config import TrainConfig  # noqa: E402
from core.model.evaluation import NetWithLoss  # noqa: E402
from core.model.losses import build_loss  # noqa: E402
from core.model.network_build import training_network  # noqa: E402
from core.model.optim import build_optimizer  # noqa: E402
from core.training.steps import MultiStep, TrainStep  # noqa: E402

ms.set_context(mode=ms.GRAPH_MODE)


def build(config):
    ms.set_seed(1)
    net = training_network(config)
    step = TrainStep(NetWithLoss(net, build_loss(config.loss)), build_optimizer(config, net.trainable_params()))
    return net, step.set_train()


def timed(run, n) -> float:
    run()  # compiles
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) / n * 1000


def main() -> None:
    config, rng, batch = TrainConfig(network=NETWORK), np.random.default_rng(0), 64
    n = K * max(1, 96 // K)  # whole calls of K: both ways take the same steps, so their weights compare
    xs = rng.standard_normal((n, batch, 1, 28, 28)).astype(np.float32)
    ys = rng.integers(0, 10, (n, batch)).astype(np.int32)
    net1, step = build(config)
    net2, step2 = build(config)
    multi = MultiStep(step2, K).set_train()

    def singles():
        for i in range(n):
            step(ms.Tensor(xs[i]), ms.Tensor(ys[i]))[0].asnumpy()

    def groups():
        for j in range(n // K):
            pairs = [(ms.Tensor(x), ms.Tensor(y)) for x, y in zip(xs[j * K:(j + 1) * K], ys[j * K:(j + 1) * K], strict=False)]
            multi(*MultiStep.batches(pairs))[0].asnumpy()
    one, many = timed(singles, n), timed(groups, n)
    same = all(np.array_equal(a.asnumpy(), b.asnumpy()) for a, b in zip(net1.get_parameters(), net2.get_parameters(), strict=False))
    print(f"{NETWORK} K={K}: {one:.2f} ms/step one per call, {many:.2f} ms/step {K} per call "
          f"({one / many:.2f}x), same weights: {same}")
    record(dict(network=NETWORK, k=K, ms_one_per_call=round(one, 2), ms_k_per_call=round(many, 2), same_weights=same,
                onednn_max_cpu_isa=os.environ.get("ONEDNN_MAX_CPU_ISA")))


def record(row: dict) -> None:
    """Append this run's figures to bench/results/kstep_alone.json (with date, versions and machine)."""
    path = Path(__file__).resolve().parent / "results" / "kstep_alone.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    rows.append({**row, "date": time.strftime("%Y-%m-%d %H:%M %Z"), "python": platform.python_version(),
                 "mindspore": version("mindspore"), "machine": f"{platform.machine()}"})
    path.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
