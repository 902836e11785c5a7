"""Markdown tables from bench/results/: the suite's (suite.json) printed, and every table the documents publish
(bench/published.py) printed or, with --write, written into README.md and docs/ between their markers.
    .venv/bin/python -m bench.report [--write]"""
import argparse
import json
import re
import sys
from pathlib import Path

from bench import published

RESULTS = Path(__file__).resolve().parent / "results" / "suite.json"


def steps_table(steps: dict) -> list[str]:
    rows = ["| network | style | mode | batch | project trainer ms (p90) | plain script, same settings ms | "
            "ratio | plain script, MindSpore defaults ms | first step s | CPU ms/step | peak RSS MB |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    tags = sorted({re.match(r"(\S+ \S+ \S+ b\d+)", k).group(1) for k in steps},
                  key=lambda t: (t.split()[0], t.split()[1], t.split()[2], int(t.split()[3][1:])))
    for tag in tags:
        p, r = steps[f"{tag} project"], steps[f"{tag} plain script, same settings"]
        d = steps.get(f"{tag} plain script, MindSpore defaults")
        net, style, mode, b = tag.split()
        rows.append(f"| {net} | {style} | {mode} | {b[1:]} | {p['median_ms']:.1f} ({p['p90_ms']:.1f}) | "
                    f"{r['median_ms']:.1f} | {p['median_ms'] / r['median_ms']:.2f} | "
                    f"{d['median_ms']:.1f} | " if d else f"| {net} | {style} | {mode} | {b[1:]} | "
                    f"{p['median_ms']:.1f} ({p['p90_ms']:.1f}) | {r['median_ms']:.1f} | "
                    f"{p['median_ms'] / r['median_ms']:.2f} | – | ")
        rows[-1] += f"{p['first_step_s']:.2f} | {p['cpu_ms_per_step']:.1f} | {p['peak_rss_mb']:.0f} |"
    return rows


def per_sample_table(steps: dict) -> list[str]:
    """Microseconds per sample for each network x style x mode at its best batch, vs the network's best."""
    best = {}
    for k, v in steps.items():
        if not k.endswith(" project"):
            continue
        net, style, mode, b = k.split()[:4]
        us = 1000 * v["median_ms"] / int(b[1:])
        key = (net, style, mode)
        best.setdefault(key, {})[int(b[1:])] = us
    rows = ["| network | style | mode | µs/sample at batch 32 / 64 / 256 | vs the network's fastest (batch 64) |",
            "|---|---|---|---|---|"]
    for net in ("lenet5", "mlp"):
        fastest64 = min(v[64] for (n, _, _), v in best.items() if n == net)
        for (n, style, mode), v in sorted(best.items()):
            if n == net:
                rows.append(f"| {net} | {style} | {mode} | {v[32]:.0f} / {v[64]:.0f} / {v[256]:.0f} | "
                            f"{v[64] / fastest64:.2f}× |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description="The benchmarks' tables from bench/results/.")
    ap.add_argument("--write", action="store_true", help="fill the marked tables in README.md and docs/")
    if ap.parse_args().write:
        print("\n".join(published.write()) or "every published table was already as recorded")
        return 0
    data = json.loads(RESULTS.read_text())
    print("environment:", json.dumps(data["environment"]))
    if "tune" in data:
        print("\n| case (project trainer, batch 64) | median ms | p90 ms | CPU ms/step |\n|---|---|---|---|")
        for k, v in data["tune"].items():
            print(f"| {k} | {v['median_ms']:.1f} | {v['p90_ms']:.1f} | {v['cpu_ms_per_step']:.1f} |")
    if "steps" in data:
        print("\n" + "\n".join(steps_table(data["steps"])))
        print("\n" + "\n".join(per_sample_table(data["steps"])))
    for part in ("epoch", "overhead", "pipeline", "predict", "torch"):
        if part in data:
            print(f"\n{part}: {json.dumps(data[part], indent=1)}")
    for name in published.TABLES:
        if all((published.RESULTS / f).exists() for f in published.FILES[name]):
            print(f"\n<!-- bench:{name} -->\n" + published.render(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
