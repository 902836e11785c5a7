"""What two options cost per training step (a benchmark that prints figures, not a test):
mixed precision (--amp-level O1/O2/O3 against float32) and the step's twin that also returns the gradients
(used once per epoch for the Weights page's statistics, against the plain step).

    .venv/bin/python -m bench.step_variants --reps 3        # ~3 min on the 2-core machine

Each case is bench/step_time.py in a fresh process (Graph mode, Cell style, batch 64, a fixed random batch,
synchronised every step, the project's oneDNN setting per network), interleaved round by round so that machine
drift spreads over all. Results: bench/results/step_variants.json; `python -m bench.report` prints the table.
"""
from __future__ import annotations

import argparse
import statistics

from bench.record import save, stamp
from bench.cases import run_case

VARIANTS = {"float32": [], "O1": ["--amp", "O1"], "O2": ["--amp", "O2"], "O3": ["--amp", "O3"],
            "float32, gradients returned": ["--with-grads"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    cases = [(net, name) for net in ("lenet5", "mlp") for name in VARIANTS]
    runs: dict[tuple, list[float]] = {case: [] for case in cases}
    for rep in range(args.reps):
        for net, name in cases:
            d = run_case("step_time.py", [net, "--steps", str(args.steps), "--json", *VARIANTS[name]], {})
            runs[(net, name)].append(round(d["median_ms"], 2))
            print(f"  [{rep + 1}/{args.reps}] {net} {name}: {d['median_ms']:.2f} ms", flush=True)
    rows = []
    for net, name in cases:
        median = statistics.median(runs[(net, name)])
        base = statistics.median(runs[(net, "float32")])
        rows.append({"network": net, "variant": name, "median_step_ms": round(median, 2),
                     "runs": runs[(net, name)], "vs_float32": round(median / base, 2)})
    save("step_variants", {"command": f"python -m bench.step_variants --reps {args.reps}", **stamp("numpy"),
                           "batch": 64, "mode": "graph", "style": "cell", "steps": args.steps, "reps": args.reps,
                           "rows": rows})
    for r in rows:
        print(f"{r['network']:7} {r['variant']:28} {r['median_step_ms']:7.2f} ms  {r['vs_float32']:.2f}x")


if __name__ == "__main__":
    main()
