"""What augmentation buys: LeNet-5 trained on the bundled 5,000 images with and without
`augment`, scored on the official 10,000-image test set. Prints epochs, wall time and accuracy.

    .venv/bin/python -m bench.augmentation [--epochs 20] [--test-dir ../shared/data/mnist]
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--test-dir", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    args = ap.parse_args(argv)
    out = {"command": f"python -m bench.augmentation --epochs {args.epochs}", **stamp(), "epochs": args.epochs,
           "runs": {}}
    for augment in ("false", "true"):
        tmp = Path(tempfile.mkdtemp())
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "core.cli.train", "--epochs", str(args.epochs), "--augment", augment,
                            "--store", str(tmp), "--out", str(tmp / "m.ckpt")], cwd=ROOT, capture_output=True,
                           text=True)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            print(p.stderr[-3000:], file=sys.stderr)
            return 1
        e = subprocess.run([sys.executable, "-m", "core.cli.evaluate", str(tmp / "m.ckpt"), "--data-dir", args.test_dir],
                           cwd=ROOT, capture_output=True, text=True)
        acc = next(line for line in e.stdout.splitlines() if "accuracy" in line)
        out["runs"][f"augment={augment}"] = {"train_wall_s": round(wall, 1), "test": acc.strip(),
                                             "test_accuracy": float(acc.split("accuracy")[1].split()[0])}
        print(f"augment={augment}: {args.epochs} epochs in {wall:.0f} s; {acc.strip()}", flush=True)
    save("augmentation", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
