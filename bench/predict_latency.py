"""What one prediction costs the app (a benchmark that prints figures, not a test): a 28x28 image read by each
network through the app's model service (Graph mode; the model loaded, compiled and warmed up first, as the
service does when a model is chosen), against the same network called in PyNative mode, the mode the service
used before. Each mode in its own process (MindSpore's mode is process-wide), interleaved round by round.

    .venv/bin/python -m bench.predict_latency --reps 3      # ~1 min on the 2-core machine

Results: bench/results/predict_latency.json (core/app/model_service.py quotes it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp
from bench.cases import ROOT, env_for

CALLS = 200


def measure(mode: str, network: str, folder: Path) -> dict:
    """In this process: (load_s, first_ms, median_ms) of one-image predictions in `mode`."""
    import numpy as np

    from core.runtime import prepare_process
    prepare_process(None)  # what the app process does
    from core.app import model_service
    from core.config import TrainConfig
    from core.model import checkpoint
    from core.model.network_build import build_network
    path = checkpoint.save(build_network(network), TrainConfig(network=network), folder / f"{network}.ckpt")
    image = np.random.default_rng(0).integers(0, 255, (1, 28, 28)).astype(np.uint8)
    started = time.perf_counter()
    if mode == "graph":
        model_service.load_model(path)
        predict = lambda: model_service.predict(path, image)  # noqa: E731
    else:
        import mindspore as ms

        from core.data.pipeline import preprocess_numpy
        from core.runtime import set_mode
        set_mode("pynative")
        net = checkpoint.load(path).net
        net.set_train(False)
        predict = lambda: net(ms.Tensor(preprocess_numpy(image))).asnumpy()  # noqa: E731
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    predict()
    first_ms = (time.perf_counter() - started) * 1000
    times = []
    for _ in range(CALLS):
        started = time.perf_counter()
        predict()
        times.append((time.perf_counter() - started) * 1000)
    return {"load_s": round(load_s, 3), "first_ms": round(first_ms, 2), "median_ms": round(statistics.median(times), 3),
            "p90_ms": round(statistics.quantiles(times, n=10)[-1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", nargs=2, metavar=("MODE", "NETWORK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(measure(*args.child, Path(tmp))))
        return
    cases = [(mode, net) for net in ("lenet5", "mlp") for mode in ("graph", "pynative")]
    runs: dict[tuple, list[dict]] = {case: [] for case in cases}
    for rep in range(args.reps):
        for mode, net in cases:
            p = subprocess.run([sys.executable, "-m", "bench.predict_latency", "--child", mode, net], cwd=ROOT,
                               env=env_for({}), capture_output=True, text=True, timeout=600, check=True)
            runs[(mode, net)].append(json.loads(p.stdout.strip().splitlines()[-1]))
            print(f"  [{rep + 1}/{args.reps}] {net} {mode}: {runs[(mode, net)][-1]}", flush=True)
    rows = [{"network": net, "mode": mode, "calls": CALLS,
             **{k: statistics.median(r[k] for r in runs[(mode, net)]) for k in ("load_s", "first_ms", "median_ms")},
             "runs_median_ms": [r["median_ms"] for r in runs[(mode, net)]]} for mode, net in cases]
    save("predict_latency", {"command": f"python -m bench.predict_latency --reps {args.reps}", **stamp(),
                             "image": "one 28x28 uint8 image, preprocessed as in training", "rows": rows})
    for r in rows:
        print(f"{r['network']:7} {r['mode']:9} median {r['median_ms']:.3f} ms, first {r['first_ms']:.1f} ms, "
              f"load (+ compile in Graph) {r['load_s']:.2f} s")


if __name__ == "__main__":
    main()
