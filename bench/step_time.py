"""Median training-step time of one configuration (fixed random batch, device sync every step).

Run each case in its own process, because the oneDNN ISA cap is fixed when mindspore is imported:
  python bench/step_time.py lenet5 cell graph            # with the project's per-network default
  ONEDNN_MAX_CPU_ISA= python bench/step_time.py lenet5   # oneDNN's own choice (empty = no cap)
  python -m bench.suite --parts tune                     # the ISA / thread comparison (docs/performance.md)
"""
import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.runtime import prepare_process  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("network", choices=("lenet5", "mlp"))
    ap.add_argument("style", nargs="?", default="cell", choices=("cell", "functional"))
    ap.add_argument("mode", nargs="?", default="graph", choices=("graph", "pynative"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--amp", default="O0", choices=("O0", "O1", "O2", "O3"), help="mixed precision, as --amp-level")
    ap.add_argument("--with-grads", action="store_true",
                    help="the step's twin that also returns the gradients (used once per epoch for the statistics)")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    args = ap.parse_args()
    prepare_process(args.network)
    import numpy as np
    import mindspore as ms
    from core.config import TrainConfig
    from core.runtime import set_mode
    from core.training.build import build_model

    cfg = TrainConfig(network=args.network, style=args.style, mode=args.mode, batch_size=args.batch,
                      amp_level=args.amp)
    set_mode(cfg.mode)
    # the network, mixed precision, step as training builds them
    stepper = build_model(cfg, resume=None, parallel=None).step
    step = stepper.with_grads if args.with_grads else stepper
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((args.batch, 1, 28, 28), dtype=np.float32))
    y = ms.Tensor(rng.integers(0, 10, args.batch).astype(np.int32))
    t = time.perf_counter()
    _ = float(step(x, y)[0])
    first = time.perf_counter() - t
    for _ in range(5):
        _ = float(step(x, y)[0])
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        _ = float(step(x, y)[0])  # waits for the step (with_grads has copied the gradients out already)
        times.append(time.perf_counter() - t)
    ms_ = np.array(times) * 1000
    if args.json:
        import json
        print(json.dumps({"median_ms": float(np.median(ms_)), "p90_ms": float(np.percentile(ms_, 90)),
                          "first_step_s": first}))
        return
    print(f"{time.strftime('%Y-%m-%d')} mindspore {ms.__version__} python {platform.python_version()} "
          f"ONEDNN_MAX_CPU_ISA={os.environ.get('ONEDNN_MAX_CPU_ISA', '')!r:8} {args.network:6} {args.style:10} "
          f"{args.mode:8} batch {args.batch}: median {np.median(ms_):6.1f} ms  p90 {np.percentile(ms_, 90):6.1f} ms  "
          f"first step {first:.2f} s")


if __name__ == "__main__":
    main()
