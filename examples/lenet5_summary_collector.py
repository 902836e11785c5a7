"""The MindSpore tutorial's LeNet-5, trained with Model.train and recorded with SummaryCollector, as a script for
MindInsight was written: `python -m core.cli.import_summary SUMMARY_DIR` opens what it wrote in the studio
(docs/mindinsight.md). It prints every step's loss, as LossMonitor does, so that the two can be compared.

    python examples/lenet5_summary_collector.py --summary-dir summaries/lenet5 [--data DIR] [--epochs 1]
"""
import argparse
import sys
from pathlib import Path

import mindspore as ms
import mindspore.nn as nn
from mindspore.train import Callback, Model, SummaryCollector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lenet5_model_train import LeNet5, create_dataset  # noqa: E402


class PrintLoss(Callback):
    """Prints `step N loss X` after every step (the script's own record of its losses)."""

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        print(f"step {cb.cur_step_num} loss {float(cb.net_outputs.asnumpy()):.6f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))  # its first paragraph
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "data" / "mnist-5k" / "train"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--summary-dir", required=True)
    ap.add_argument("--steps", type=int, default=0, help="stop each epoch after this many batches (0: all)")
    args = ap.parse_args()
    ms.set_seed(1)
    ms.set_context(mode=ms.GRAPH_MODE)
    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    data = create_dataset(args.data)
    if args.steps:
        data = data.take(args.steps)
    collector = SummaryCollector(args.summary_dir, collect_freq=1, keep_default_action=True,
                                 collect_specified_data={"collect_input_data": True, "histogram_regular": "^conv"})
    model = Model(net, loss, optimizer, metrics={"accuracy"})
    model.train(args.epochs, data, callbacks=[collector, PrintLoss()], dataset_sink_mode=False)


if __name__ == "__main__":
    main()
