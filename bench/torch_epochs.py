"""PyTorch (eager) training on the same images as the project, as the user-visible yardstick: the bundled
5,000 MNIST training images decoded once into tensors, normalised as the project does, the same networks
(bench/torch_step.py), SGD with momentum 0.9, lr 0.01, batch 64, a fresh shuffle every epoch.
Not a dependency: run it with an interpreter that has torch.

    /path/to/python-with-torch bench/torch_epochs.py --network lenet5 --epochs 4

Prints one JSON line: samples/s over the epochs after the first, and each epoch's seconds.
"""
import argparse
import json
import struct
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from torch_step import lenet5, mlp

DATA = Path(__file__).resolve().parent.parent / "data" / "mnist-5k" / "train"


def idx(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--network", choices=("lenet5", "mlp"), default="lenet5")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    torch.manual_seed(0)
    images = idx(DATA / "train-images-idx3-ubyte").astype(np.float32) / 255.0
    x = torch.from_numpy(((images - 0.1307) / 0.3081)[:, None])
    y = torch.from_numpy(idx(DATA / "train-labels-idx1-ubyte").astype(np.int64))
    x, y = x[:4500], y[:4500]  # the project trains on 4,500 (10 % held out for validation)
    net = lenet5() if args.network == "lenet5" else mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    seconds = []
    for _ in range(args.epochs):
        started = time.perf_counter()
        order = torch.randperm(len(x))
        for i in range(0, len(x), args.batch):
            batch = order[i:i + args.batch]
            opt.zero_grad()
            loss = loss_fn(net(x[batch]), y[batch])
            loss.backward()
            opt.step()
        loss.item()
        seconds.append(time.perf_counter() - started)
    later = seconds[1:] or seconds
    print(json.dumps({"samples_per_s": len(x) * len(later) / sum(later), "epoch_seconds": seconds,
                      "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
