"""Data pipeline throughput alone: the project's MindSpore pipeline over the bundled training split,
batch 64, iterated without training (two epochs through one iterator; the second is timed)."""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.runtime import prepare_process  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    prepare_process("lenet5")
    from core.data.folders import validate_mnist_dir
    from core.data.pipeline import create_dataset
    folder = validate_mnist_dir(None)
    ds = create_dataset(folder, "train", None, 64, shuffle=True, num_parallel_workers=args.workers)
    it = ds.create_tuple_iterator(num_epochs=2)
    n = 0
    for _ in it:
        pass  # epoch 1: warm-up
    t = time.perf_counter()
    for data, label in it:
        data.asnumpy()
        n += int(label.shape[0])
    dt = time.perf_counter() - t
    print(json.dumps({"samples_per_s": n / dt, "ms_per_batch_of_64": 1000 * dt / (n / 64)}))


if __name__ == "__main__":
    main()
