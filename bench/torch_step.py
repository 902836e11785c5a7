"""The same LeNet-5 (28x28 input, conv1 padding 2) / MLP training step in PyTorch, as an outside yardstick.
Not a dependency: run with an interpreter that has torch (python -m bench.suite --parts torch)."""
import argparse
import json
import time

import torch
from torch import nn


def lenet5():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("network", choices=("lenet5", "mlp"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    torch.manual_seed(0)
    net = lenet5() if args.network == "lenet5" else mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.randn(args.batch, 1, 28, 28), torch.randint(0, 10, (args.batch,))

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(10):
        step()
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    times.sort()
    print(json.dumps({"median_ms": 1000 * times[len(times) // 2], "p90_ms": 1000 * times[int(len(times) * 0.9)],
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
