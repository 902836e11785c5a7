"""Command line: python -m core.cli.evaluate <checkpoint.ckpt> [--data-dir DIR] [--split test|validation] [--shifts]

Reports a checkpoint's test metrics: accuracy, loss, per-class precision/recall/F1, the confusion matrix; with
--shifts, of each image read with its four 1-pixel shifts, probabilities averaged (core.model.shift_reading).
"""
from __future__ import annotations

import argparse
import sys

from core.data.folders import validate_mnist_dir
from core.data.idx import DataError
from core.runtime import prepare_process, set_mode


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="Report test metrics of a checkpoint.")
    ap.add_argument("checkpoint")
    ap.add_argument("--data-dir", default=None, help="MNIST folder (default: the bundled 5,000 images)")
    ap.add_argument("--split", choices=("test", "validation"), default=None,
                    help="default: test when the folder has one, else validation")
    ap.add_argument("--mode", choices=("graph", "pynative"), default="pynative")
    ap.add_argument("--shifts", action="store_true",
                    help="read each image with its four 1-pixel shifts and average the probabilities (test-time "
                         "augmentation); the loss is then the cross-entropy of that average")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prepare_process(None)
    # deferred: these import mindspore, which must come after prepare_process
    from core.model.checkpoint import CheckpointError, load
    from core.model.evaluation import evaluate
    try:
        folder = validate_mnist_dir(args.data_dir)
        set_mode(args.mode)
        model = load(args.checkpoint)
        split = args.split or ("test" if folder.has_test else "validation")
        r = evaluate(model.net, model.config.loss, folder, split, model.config.val_fraction, shifts=args.shifts)
    except (DataError, CheckpointError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    reading = ", each with its four 1-pixel shifts" if args.shifts else ""
    print(f"{model.config.network} from {args.checkpoint} on {folder.root} "
          f"({split}, {len(r.labels):,} images{reading})")
    _print_report(r)
    return 0


def _print_report(r) -> None:
    print(f"accuracy {r.accuracy:.4f}   loss {r.loss:.4f}")
    print("class  precision  recall  f1     support")
    for c in range(10):
        print(f"{c:>5}  {r.precision[c]:9.4f}  {r.recall[c]:6.4f}  {r.f1[c]:.4f}  {r.support[c]:>7}")
    print("confusion matrix (rows: true, columns: predicted)")
    for row in r.confusion:
        print(" ".join(f"{v:5d}" for v in row))
    print(f"{len(r.misclassified)} misclassified")


if __name__ == "__main__":
    sys.exit(main())
