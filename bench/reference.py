"""The plain MindSpore script the seeds and the tutorials write, as the yardstick for the project's trainer:
create_dataset -> TrainOneStepCell (or value_and_grad + optimizer) -> for data, label in
dataset.create_tuple_iterator(). Same networks, loss, optimizer and data; no callbacks, no metrics, no store.

    python bench/reference.py --network lenet5 --style cell --mode graph --batch 64 --epochs 1 [--steps N]

Prints one JSON line: per-step wall times (sync every step), first-step time, CPU time, peak RSS.
"""
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.case_args import case_parser  # noqa: E402


def create_dataset(data_path, batch_size=64):
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.dataset.transforms as transforms
    import mindspore.dataset.vision as vision
    mnist = ds.MnistDataset(data_path, usage="train", shuffle=True)
    mnist = mnist.map([vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                       vision.HWC2CHW()], "image")
    mnist = mnist.map(transforms.TypeCast(ms.int32), "label")
    return mnist.batch(batch_size)


def main() -> None:
    ap = case_parser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "data" / "mnist-5k" / "train"))
    args = ap.parse_args()
    t_start = time.perf_counter()
    import mindspore as ms
    import mindspore.nn as nn
    from core.model.network_build import build_network  # the same cells as the project (graph mode parses files)

    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(42)
    net = build_network(args.network)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    if args.style == "cell":
        train_step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
        train_step.set_train()
    else:
        def forward_fn(data, label):
            return loss_fn(net(data), label)
        grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)

        def train_step(data, label):
            loss, grads = grad_fn(data, label)
            optimizer(grads)
            return loss
        net.set_train()
    dataset = create_dataset(args.data, args.batch)
    marks, step, cpu0, t_loop = [], 0, None, time.perf_counter()
    for _ in range(args.epochs):
        for data, label in dataset.create_tuple_iterator():
            loss = train_step(data, label)
            loss.asnumpy()  # sync, as the trainer does
            marks.append(time.perf_counter())
            step += 1
            if step == 1:
                cpu0 = time.process_time()
            if args.steps and step >= args.steps:
                break
        if args.steps and step >= args.steps:
            break
    cpu = time.process_time() - cpu0
    print(json.dumps({"impl": "reference", "marks": [m - t_loop for m in marks], "loop_start": t_loop - t_start,
                      "cpu_s_after_first": cpu, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "total_s": time.perf_counter() - t_start, "env_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")}))


if __name__ == "__main__":
    main()
