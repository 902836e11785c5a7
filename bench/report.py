"""Markdown tables from bench/results/suite.json, user_visible.json and page_times.json (what
docs/performance.md quotes):
    .venv/bin/python -m bench.report"""
import json
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "suite.json"
USER_VISIBLE = RESULTS.parent / "user_visible.json"
PAGE_TIMES = RESULTS.parent / "page_times.json"


def user_visible_table(data: dict) -> list[str]:
    """bench/user_visible.py: samples/s through the command line vs the plain script vs PyTorch."""
    rows = [f"{data['command']} — {data['date']}, {data['machine']}, Python {data['python']}, "
            f"mindspore {data['versions']['mindspore']}, torch {data['torch']}, {data['reps']} rounds interleaved, "
            f"samples/s over epochs 2–{data['epochs']}", "",
            "| network | variant | samples/s (median) | each round | time per sample vs PyTorch |", "|---|---|---|---|---|"]
    for r in data["rows"]:
        ratio = f"{r['time_per_sample_vs_pytorch']:.2f}×" if r["time_per_sample_vs_pytorch"] else "–"
        rows.append(f"| {r['network']} | {r['variant']} | {r['median_samples_per_s']:,} | "
                    f"{', '.join(f'{v:,}' for v in r['runs'])} | {ratio} |")
    return rows


def page_times_table(data: dict) -> list[str]:
    """bench/page_times.py: the click on a page's link -> the page complete, in Chromium."""
    rows = [f"{data['command']} — {data['date']}, {data['machine']}, streamlit {data.get('streamlit') or data['versions']['streamlit']}, "
            f"{data['runs_in_store']} runs in the store, {data.get('settle_s', 0)} s on the first page", "",
            "| page | first visit in the server's life, s (median / max) | later visits, s (median / max) |",
            "|---|---|---|"]
    for page, figures in data["summary"].items():
        cells = [f"{figures[k]['median']:.2f} / {figures[k]['max']:.2f}" if k in figures else "–"
                 for k in ("first_visit_s", "later_visits_s")]
        rows.append(f"| {page} | {cells[0]} | {cells[1]} |")
    return rows


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
    for path, table in ((USER_VISIBLE, user_visible_table), (PAGE_TIMES, page_times_table)):
        if path.exists():
            print("\n" + "\n".join(table(json.loads(path.read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
