"""The best-5k preset and what each part of it contributes: LeNet-5 trained on the bundled 5,000 images, scored
on the official 10,000 test images; the preset, then the preset without one part at a time, and the default
settings for reference. Prints a table and records it (date, versions, machine) in bench/results/best_5k.json.

    .venv/bin/python -m bench.best_5k [--test-dir ../shared/data/mnist] [--seeds 42] [--only preset,default]

Training time is the run's own (from the run store: time spent in steps and validation, without process
start or graph compilation), so that it is the figure the Train page shows; wall time is printed beside it.
Run it on an otherwise idle machine: the runs take ~1 minute each."""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.config import TrainConfig, field_text  # noqa: E402
from core.presets import PRESETS  # noqa: E402
from core.runs.store import RunStore  # noqa: E402

BEST = PRESETS["best-5k"]
DEFAULT = TrainConfig()
# Each variant: the preset with one part taken out (the part's effect is the difference to the preset).
VARIANTS = {
    "preset": {},
    "without augmentation": {"augment": False},
    "without one-cycle (constant 0.05)": {"lr_schedule": "constant"},
    "without label smoothing": {"loss": DEFAULT.loss},
    "without weight decay": {"weight_decay": 0.0},
    "with a 10 % validation split": {"val_fraction": 0.1},
    "40 epochs instead of 50": {"epochs": 40},
    "60 epochs instead of 50": {"epochs": 60},
    "default settings (10 epochs)": "default",
}


def flags(config: TrainConfig) -> list[str]:
    out = []
    for name, value in config.to_dict().items():
        if value != getattr(DEFAULT, name) and name != "data_dir":
            out += ["--" + name.replace("_", "-"), field_text(name, getattr(config, name))]
    return out


def one(name: str, config: TrainConfig, test_dir: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="best5k-"))
    args = flags(config)
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "core.cli.train", *args, "--store", str(tmp), "--out", str(tmp / "m.ckpt")],
                       cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"{name}: training failed:\n{p.stderr[-3000:]}")
    e = subprocess.run([sys.executable, "-m", "core.cli.evaluate", str(tmp / "m.ckpt"), "--data-dir", test_dir],
                       cwd=ROOT, capture_output=True, text=True)
    accuracy = float(re.search(r"accuracy (\S+)", e.stdout).group(1))
    store = RunStore(tmp)
    (run,) = store.list_runs()
    training_s = store.steps(run.id, max_points=1)[-1].elapsed
    return {"variant": name, "flags": " ".join(args), "test_accuracy": accuracy, "training_s": round(training_s, 1),
            "wall_s": round(wall, 1), "seed": config.seed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--test-dir", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--seeds", default="42,1,2", help="comma-separated seeds: the preset runs with each, the other "
                                                     "variants with the first")
    ap.add_argument("--only", default=None, help="comma-separated variant names (default: all)")
    args = ap.parse_args(argv)
    chosen = [v for v in VARIANTS if not args.only or v in args.only.split(",")]
    rows = []
    seeds = [int(s) for s in args.seeds.split(",")]
    for seed in seeds:
        for name in (chosen if seed == seeds[0] else [v for v in chosen if v == "preset"]):
            change = VARIANTS[name]
            config = (DEFAULT if change == "default" else BEST.with_(**change)).with_(seed=seed)
            row = one(name, config, args.test_dir)
            rows.append(row)
            print(f"{name:36s} seed {seed:>3}  test {row['test_accuracy']:.2%}  training {row['training_s']:5.1f} s  "
                  f"(wall {row['wall_s']:.0f} s)", flush=True)
    save("best_5k", {"command": " ".join(["python -m bench.best_5k", *(argv if argv is not None else sys.argv[1:])]),
                     **stamp(), "preset": " ".join(flags(BEST)), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
