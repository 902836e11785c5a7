"""The benchmark suite (not a test: it prints figures). One command runs it all:

    .venv/bin/python -m bench.suite                 # every part, ~25 min on the 2-core machine
    .venv/bin/python -m bench.suite --parts tune steps --reps 2

Parts:
  tune      oneDNN ISA cap x OpenMP threads for each network, through the project's trainer (picks defaults)
  steps     step time, {LeNet-5, MLP} x {Cell, functional} x {Graph, PyNative} x batch {32, 64, 256}:
            the project's trainer vs the plain tutorial script (bench/reference.py) with the same settings,
            and the plain script with MindSpore's own defaults
  epoch     one epoch of 60,000 images end to end (a resampled copy of the bundled 5,000, pipeline included)
  overhead  the dashboard path (worker process + run store + a poller reading the store like the Train page)
            vs the plain script, same run
  pipeline  data pipeline throughput alone vs what training consumes
  predict   prediction latency for one image in the app's model service; app cold start to first page served
  torch     the same steps in PyTorch when `torch` is importable (not a dependency)
  user      what a user sees: samples/s through the command line (worker, store, pipeline) vs the plain seed script
            vs PyTorch eager on the same images, interleaved (bench/user_visible.py; TORCH_PYTHON for PyTorch)
  modes     PyNative against Graph through the command line, every network x style (bench/modes.py)
  start     Start -> first live step in a real browser, with and without warm workers (bench/start_latency.py)
  pages     opening every page in a real browser with a 10-run store (bench/page_times.py)
Configurations are interleaved (A B A B ...) so that machine drift spreads over all of them; each runs in a
fresh process because the oneDNN settings are fixed when mindspore is imported. Step time = wall time
between consecutive steps (data loading included, device sync every step), after WARMUP steps.
Results go to bench/results/suite.json (raw figures and the environment) and the printed tables.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

from bench.cases import PRESETS, PY, RESULTS, ROOT, reference_preset, run_case

WARMUP = 10


def step_stats(d: dict) -> dict:
    marks = np.array(d["marks"])
    steps = np.diff(marks[WARMUP:]) * 1000 if len(marks) > WARMUP + 2 else np.diff(marks) * 1000
    return {"median_ms": float(np.median(steps)), "p90_ms": float(np.percentile(steps, 90)),
            "first_step_s": float(marks[0]), "cpu_ms_per_step": 1000 * d["cpu_s_after_first"] / max(len(marks) - 1, 1),
            "peak_rss_mb": d["peak_rss_mb"], "steps": len(marks)}


def interleave(cases: list[tuple[str, tuple]], reps: int, runner) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name, _ in cases}
    for rep in range(reps):
        for name, spec in cases:
            out[name].append(runner(*spec))
            print(f"  [{rep + 1}/{reps}] {name}: {out[name][-1].get('median_ms', 0):.1f} ms", flush=True)
    return out


def merge(samples: list[dict]) -> dict:
    """The median over repetitions of each figure (nested dicts too; text is kept from the first)."""
    out = {}
    for k, first in samples[0].items():
        if isinstance(first, dict):
            out[k] = merge([s[k] for s in samples])
        elif isinstance(first, (int, float)) and not isinstance(first, bool):
            out[k] = statistics.median(s[k] for s in samples)
        else:
            out[k] = first
    return out


# --- parts ---------------------------------------------------------------------------------------------------
def part_tune(reps: int, steps: int) -> dict:
    cases = []
    for net in ("lenet5", "mlp"):
        for isa in (None, "AVX2"):
            for omp in (None, "1", "2"):
                name = f"{net} isa={isa or 'own'} omp={omp or 'unset'}"
                preset = {"ONEDNN_MAX_CPU_ISA": isa or "", "OMP_NUM_THREADS": omp}
                cases.append((name, ("project_case.py", ["--network", net, "--steps", str(steps)], preset)))
    raw = interleave(cases, reps, lambda script, args, preset: step_stats(run_case(script, args, preset)))
    return {name: merge(v) for name, v in raw.items()}


def part_steps(reps: int, steps: int) -> dict:
    cases = []
    for net in ("lenet5", "mlp"):
        for style in ("cell", "functional"):
            for mode in ("graph", "pynative"):
                for batch in (32, 64, 256):
                    a = ["--network", net, "--style", style, "--mode", mode, "--batch", str(batch),
                         "--steps", str(steps)]
                    tag = f"{net} {style} {mode} b{batch}"
                    cases.append((f"{tag} project", ("project_case.py", a, {})))
                    cases.append((f"{tag} plain script, same settings", ("reference.py", a, reference_preset(net))))
                    if batch == 64:
                        cases.append((f"{tag} plain script, MindSpore defaults",
                                      ("reference.py", a, PRESETS["mindspore-default"])))
    raw = interleave(cases, reps, lambda script, args, preset: step_stats(run_case(script, args, preset)))
    return {name: merge(v) for name, v in raw.items()}


def make_60k(folder: Path) -> Path:
    """60,000 training images resampled (with replacement, seeded) from the bundled 5,000 real ones."""
    from core.data.folders import BUNDLED_DIR, load_arrays, validate_mnist_dir
    from core.data.idx import write_idx
    target = folder / "train" / "train-images-idx3-ubyte"
    if target.exists():
        return folder
    images, labels = load_arrays(validate_mnist_dir(BUNDLED_DIR), "train")
    idx = np.random.default_rng(0).integers(0, len(labels), 60_000)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_idx(images[idx], labels[idx], target, folder / "train" / "train-labels-idx1-ubyte")
    return folder


def part_epoch(reps: int, steps: int) -> dict:
    data = make_60k(RESULTS / "mnist-60k-resampled")
    out = {"data": "60,000 images resampled with replacement from the bundled 5,000 real MNIST images "
                   "(no network here for the full set)"}
    cases = []
    for net in ("lenet5", "mlp"):
        a = ["--network", net, "--data", str(data), "--epochs", "1"]
        cases.append((f"{net} project trainer (defaults, all 60,000 images, no validation)",
                      ("project_case.py", a, {})))
        cases.append((f"{net} plain script, same settings", ("reference.py", [*a[:2], "--data", str(data / "train")],
                                                             reference_preset(net))))
    raw = interleave(cases, reps, lambda script, args, preset: _epoch(run_case(script, args, preset)))
    out.update({name: merge(v) for name, v in raw.items()})
    return out


def _epoch(d: dict) -> dict:
    marks = d["marks"]
    return {"epoch_s": marks[-1], "steps": len(marks), "samples_per_s": len(marks) * 64 / marks[-1],
            "process_total_s": d["total_s"], "median_ms": float(np.median(np.diff(marks)) * 1000)}


def part_overhead(reps: int, steps: int) -> dict:
    """Same run (LeNet-5 defaults, 3 epochs on the bundled data, no validation so that both do the same
    work): through the dashboard's worker + store with a poller reading the store every second like the
    Train page, vs the plain script."""
    import tempfile
    import threading

    from core.runs.launch import launcher
    from core.config import TrainConfig
    from core.runs.store import RunStore

    def dashboard(_script, _args, _preset):
        store = RunStore(Path(tempfile.mkdtemp(prefix="bench-store-")))
        t0 = time.perf_counter()
        run_id = launcher.start(store, TrainConfig(epochs=3, val_fraction=0.0))
        done = threading.Event()

        def poll():  # what a watching Train page reads each second
            while not done.wait(1.0):
                store.get(run_id), store.steps(run_id, max_points=1500), store.epochs(run_id), store.logs(run_id, 60)
                store.active_run()
        threading.Thread(target=poll, daemon=True).start()
        while store.get(run_id).active:
            time.sleep(0.1)
        total = time.perf_counter() - t0
        done.set()
        run = store.get(run_id)
        assert run.status == "completed", run.message
        train_s = store.epochs(run_id)[-1].elapsed
        return {"train_loop_s": train_s, "process_total_s": total}

    def plain(_script, args, preset):
        d = run_case("reference.py", args, preset)
        return {"train_loop_s": d["marks"][-1], "process_total_s": d["total_s"]}

    cases = [("dashboard path", ("", [], {})),
             ("plain script", ("reference.py", ["--network", "lenet5", "--epochs", "3"], reference_preset("lenet5")))]
    raw = interleave(cases, reps, lambda script, args, preset: (dashboard if not script else plain)(script, args, preset))
    out = {name: merge(v) for name, v in raw.items()}
    out["ratio_train_loop"] = out["dashboard path"]["train_loop_s"] / out["plain script"]["train_loop_s"]
    out["ratio_process_total"] = out["dashboard path"]["process_total_s"] / out["plain script"]["process_total_s"]
    return out


def part_pipeline(reps: int, steps: int) -> dict:
    out = {}
    for workers in (1, 2):
        samples = [run_case("pipeline_case.py", ["--workers", str(workers)], {}) for _ in range(reps)]
        out[f"pipeline alone, num_parallel_workers={workers}"] = merge(samples)
    return out


def part_predict(reps: int, steps: int) -> dict:
    return merge([run_case("predict_case.py", [], {}) for _ in range(reps)])


def part_torch(reps: int, steps: int) -> dict:
    py = os.environ.get("TORCH_PYTHON", PY)
    probe = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if probe.returncode != 0:
        return {"skipped": "torch is not importable (set TORCH_PYTHON to an interpreter that has it)"}
    out = {"torch": probe.stdout.strip(), "note": "fixed batch of 64, no data pipeline, sync every step; "
                                                   "MindSpore measured the same way by bench/step_time.py"}

    def torch_case(net):
        p = subprocess.run([py, str(ROOT / "bench" / "torch_step.py"), net, "--steps", str(max(steps, 60))],
                           capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-2000:])
        return json.loads(p.stdout.strip().splitlines()[-1])

    cases = []
    for net in ("lenet5", "mlp"):
        cases.append((f"{net} PyTorch", ("torch", net, {})))
        cases.append((f"{net} MindSpore, project defaults", ("step_time.py", [net, "cell", "graph", "--json"], {})))
        cases.append((f"{net} MindSpore, its own defaults",
                      ("step_time.py", [net, "cell", "graph", "--json"], PRESETS["mindspore-default"])))
    raw = interleave(cases, reps, lambda script, args, preset: torch_case(args) if script == "torch"
                     else run_case(script, args, preset))
    out.update({name: merge(v) for name, v in raw.items()})
    for net in ("lenet5", "mlp"):
        out[f"{net} ratio project/PyTorch"] = (out[f"{net} MindSpore, project defaults"]["median_ms"]
                                               / out[f"{net} PyTorch"]["median_ms"])
        out[f"{net} ratio MindSpore defaults/PyTorch"] = (out[f"{net} MindSpore, its own defaults"]["median_ms"]
                                                          / out[f"{net} PyTorch"]["median_ms"])
    return out


def part_user(reps: int, steps: int) -> dict:
    """What a user sees (issue 14's comparison): bench/user_visible.py, with PyTorch when TORCH_PYTHON has it."""
    from bench import user_visible  # deferred: each part imports only what it runs
    torch_python = os.environ.get("TORCH_PYTHON")
    return user_visible.main(["--reps", str(max(reps, 3))] + (["--torch-python", torch_python] if torch_python else []))


def part_modes(reps: int, steps: int) -> dict:
    """PyNative against Graph through the command line, every network x style: bench/modes.py."""
    from bench import modes  # deferred: each part imports only what it runs
    return modes.main(["--reps", str(max(reps, 3))])


def part_start(reps: int, steps: int) -> dict:
    """Start -> first live step in Chromium, with and without warm workers: bench/start_latency.py."""
    from bench import start_latency  # deferred: Playwright
    return start_latency.main(["--reps", str(reps)])


def part_pages(reps: int, steps: int) -> dict:
    """Opening each page in Chromium with a 10-run store: bench/page_times.py."""
    from bench import page_times  # deferred: Playwright
    return page_times.main(["--reps", str(reps)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", default=["tune", "steps", "epoch", "overhead", "pipeline", "predict",
                                                   "torch", "user", "modes", "start", "pages"])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path = RESULTS / "suite.json"
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    results["environment"] = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "cpu": _cpu_name(), "python": platform.python_version(),
        "versions": {p: version(p) for p in ("mindspore", "numpy", "streamlit")},
        "command": "python -m bench.suite " + " ".join(argv if argv is not None else sys.argv[1:])}
    for part in args.parts:
        print(f"== {part}", flush=True)
        fn = globals()[f"part_{part}"]
        results[part] = fn(args.reps, args.steps)
        out_path.write_text(json.dumps(results, indent=1))
        print_part(part, results[part])
    print(f"raw results: {out_path}")
    return 0


def print_part(part: str, data) -> None:
    if isinstance(data, dict) and all(isinstance(v, dict) and "median_ms" in v for v in data.values()):
        print(f"{'case':55} {'median':>8} {'p90':>8} {'first s':>8} {'cpu ms':>8} {'RSS MB':>8}")
        for name, s in data.items():
            print(f"{name:55} {s['median_ms']:8.2f} {s['p90_ms']:8.2f} {s['first_step_s']:8.2f} "
                  f"{s['cpu_ms_per_step']:8.2f} {s['peak_rss_mb']:8.0f}")
    else:
        print(json.dumps(data, indent=1))


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass  # no /proc (not Linux): the platform's own name below
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
