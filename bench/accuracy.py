"""The README's headline figures (a benchmark that records them, not a test): each network trained with the
defaults on the bundled 5,000 images through the command line, scored on the official 10,000 test images, and
its exports (ONNX read by ONNX Runtime, MindIR by ms.load + nn.GraphCell) checked on the same 10,000 images
against the checkpoint, as the Runs page checks them.

    .venv/bin/python -m bench.accuracy                      # ~2 min on the 2-core machine

Results: bench/results/accuracy.json; `python -m bench.report --write` puts the table in the README.
tests/process/test_accuracy.py keeps a floor under the same command.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.record import save, stamp
from core.config import NETWORKS
from bench.cases import ROOT, env_for

SHARED_MNIST = ROOT.parent / "shared" / "data" / "mnist"


def _cli(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env_for({}), capture_output=True, text=True,
                       timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{p.stderr[-3000:]}")
    return p.stdout


def train_and_score(network: str, work: Path, test_data: Path) -> dict:
    """Train with the defaults through the command line; the official test set's accuracy and the times."""
    ckpt = work / f"{network}.ckpt"
    started = time.perf_counter()
    _cli("core.cli.train", "--network", network, "--store", str(work / "store"), "--out", str(ckpt))
    wall = time.perf_counter() - started
    from core.runs.store import RunStore  # deferred: after the training process, so nothing competes with it
    run = next(r for r in RunStore(work / "store").list_runs() if r.config.network == network)
    said = _cli("core.cli.evaluate", str(ckpt), "--data-dir", str(test_data))
    assert "(test, 10,000 images)" in said, said
    return {"network": network, "test_accuracy": float(re.search(r"accuracy (\S+)", said).group(1)),
            "epochs": run.config.epochs, "training_s": round(run.duration, 1), "command_wall_s": round(wall, 1),
            "checkpoint": ckpt}


def export_agreement(ckpt: Path, work: Path, test_data: Path) -> dict:
    """Each format exported and read back on the 10,000 test images, against the checkpoint's own reading."""
    from core.app import model_service  # deferred: MindSpore, imported after the training processes ended
    from core.data.folders import load_arrays, validate_mnist_dir
    images, _ = load_arrays(validate_mnist_dir(test_data), "test")
    out = {}
    for fmt in ("onnx", "mindir"):
        path = model_service.export(ckpt, fmt, work / f"{ckpt.stem}-{fmt}")
        a = model_service.check_export(ckpt, path, fmt, images)
        out[fmt] = {"identical": a.identical, "n": a.n, "max_probability_diff": float(f"{a.max_probability_diff:.2g}")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test-data", type=Path, default=SHARED_MNIST, help="MNIST folder with the official test set")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for network in NETWORKS:
            row = train_and_score(network, Path(tmp), args.test_data)
            print(f"{network}: {row['test_accuracy']:.2%} on the official test set, {row['training_s']} s training",
                  flush=True)
            rows.append(row)
        for row in rows:
            row["export"] = export_agreement(row.pop("checkpoint"), Path(tmp), args.test_data)
            print(f"{row['network']} exports: {row['export']}", flush=True)
    save("accuracy", {"command": "python -m bench.accuracy", **stamp("onnx", "onnxruntime"),
                      "data": "bundled 5,000 training images; official 10,000 test images", "rows": rows})


if __name__ == "__main__":
    main()
