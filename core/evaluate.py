"""Evaluate a network on a data split and predict single images.

Command line: python -m core.evaluate <checkpoint.ckpt> [--data-dir DIR] [--split test|validation]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from core.runtime import prepare_process


def evaluation_set(folder, split: str, val_fraction: float) -> tuple[str, np.ndarray | None]:
    """(file split, indices) for "test" or "validation" (the run's held-out part of the training file)."""
    from core.data_source import load_labels, stratified_split
    if split == "test":
        if not folder.has_test:
            raise ValueError(f"{folder.root} has no test split. Evaluate on the validation split, or use a "
                             "MNIST folder with test/ (e.g. one made by `python -m core.download`).")
        return "test", None
    if split == "validation":
        labels = load_labels(folder, "train")
        _, val_idx = stratified_split(labels, val_fraction)
        if len(val_idx) == 0:
            raise ValueError("this run used no validation split (val_fraction 0): evaluate on a test split")
        return "train", val_idx
    raise ValueError(f"unknown split {split!r}; choose test or validation")


def evaluate(net, loss_name: str, folder, split: str, val_fraction: float, batch_size: int = 500):
    """A metrics.Report for the network on the chosen split."""
    from core.losses import build_loss
    from core.metrics import report
    from core.pipeline import create_dataset
    from core.trainer import NetWithLoss, evaluate_batches
    file_split, indices = evaluation_set(folder, split, val_fraction)
    dataset = create_dataset(folder, file_split, indices, batch_size, shuffle=False)
    loss, _, logits, labels = evaluate_batches(NetWithLoss(net, build_loss(loss_name)), dataset)
    ids = np.arange(len(labels)) if indices is None else np.asarray(indices)
    return report(logits, labels, loss, ids)


def predict(net, images: np.ndarray) -> np.ndarray:
    """Class probabilities (N, 10) for uint8 images (N, 28, 28), preprocessed exactly like training."""
    import mindspore as ms
    from core.metrics import softmax
    from core.pipeline import preprocess_numpy
    net.set_train(False)
    logits = net(ms.Tensor(preprocess_numpy(images))).asnumpy()
    return softmax(logits)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Report test metrics of a checkpoint.")
    ap.add_argument("checkpoint")
    ap.add_argument("--data-dir", default=None, help="MNIST folder (default: the bundled 5,000 images)")
    ap.add_argument("--split", choices=("test", "validation"), default=None,
                    help="default: test when the folder has one, else validation")
    ap.add_argument("--mode", choices=("graph", "pynative"), default="pynative")
    args = ap.parse_args(argv)
    prepare_process(None)
    from core.checkpoint import CheckpointError, load
    from core.data_source import validate_mnist_dir
    from core.idx import DataError
    from core.runtime import set_mode
    try:
        folder = validate_mnist_dir(args.data_dir)
        set_mode(args.mode)
        model = load(args.checkpoint)
        split = args.split or ("test" if folder.has_test else "validation")
        r = evaluate(model.net, model.config.loss, folder, split, model.config.val_fraction)
    except (DataError, CheckpointError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{model.config.network} from {args.checkpoint} on {folder.root} ({split}, {len(r.labels):,} images)")
    print(f"accuracy {r.accuracy:.4f}   loss {r.loss:.4f}")
    print("class  precision  recall  f1     support")
    for c in range(10):
        print(f"{c:>5}  {r.precision[c]:9.4f}  {r.recall[c]:6.4f}  {r.f1[c]:.4f}  {r.support[c]:>7}")
    print("confusion matrix (rows: true, columns: predicted)")
    for row in r.confusion:
        print(" ".join(f"{v:5d}" for v in row))
    print(f"{len(r.misclassified)} misclassified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
