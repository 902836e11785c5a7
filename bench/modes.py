"""PyNative against Graph, as a user sees it: samples/s training the bundled images through the command line,
for every network x style (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.modes [--reps 3] [--epochs 4]

Each combination runs `python -m core.cli.train --network N --style S --mode M` (the project's defaults otherwise;
Graph's Cell style with a warm worker's K steps per call, bench.user_visible.prepared_k), rounds interleaved;
samples/s over the epochs after the first, read from the store. Reports PyNative's time per sample against
Graph's for each network x style. Results: bench/results/modes.json (date, versions).
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path

from bench.record import save, stamp
from bench.teaching_cost import train_once
from bench.user_visible import prepared_k

ROOT = Path(__file__).resolve().parent.parent
CASES = list(itertools.product(("lenet5", "mlp"), ("cell", "functional"), ("graph", "pynative")))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=4)
    args = ap.parse_args(argv)
    figures: dict[tuple, list[float]] = {case: [] for case in CASES}
    for rep in range(args.reps):
        for network, style, mode in CASES:
            k = ["--steps-per-call", str(prepared_k(network))] if (style, mode) == ("cell", "graph") else []
            value = train_once(ROOT, network, args.epochs, ["--style", style, "--mode", mode, *k])
            figures[(network, style, mode)].append(value)
            print(f"round {rep + 1} {network:6} {style:10} {mode:8} {value:8.0f} samples/s", flush=True)
    rows = []
    for network, style in itertools.product(("lenet5", "mlp"), ("cell", "functional")):
        graph = statistics.median(figures[(network, style, "graph")])
        eager = statistics.median(figures[(network, style, "pynative")])
        rows.append({"network": network, "style": style, "graph_samples_per_s": round(graph),
                     "pynative_samples_per_s": round(eager), "pynative_time_vs_graph": round(graph / eager, 2),
                     "runs": {m: [round(v) for v in figures[(network, style, m)]] for m in ("graph", "pynative")}})
        print(f"{network:6} {style:10} graph {graph:8,.0f}  pynative {eager:8,.0f}  PyNative's time per sample "
              f"{graph / eager:.2f}x Graph's")
    out = {"command": "python -m bench.modes " + " ".join(sys.argv[1:] if argv is None else argv), **stamp(),
           "epochs": args.epochs, "reps": args.reps, "rows": rows}
    save("modes", out)
    return out


if __name__ == "__main__":
    main()
