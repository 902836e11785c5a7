"""The tables README.md and docs/ publish, generated from the results files the benchmarks record.

A table lives in a document between two markers:
    <!-- bench:accuracy -->
    ... generated: never edited by hand ...
    <!-- /bench:accuracy -->
`python -m bench.report --write` fills every marked block from bench/results/; tests/unit/test_published.py fails
when a block differs from what its results file gives, so a figure cannot be changed by hand or outlive its
measurement.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Callable

from core.i18n import counted

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
BLOCK = re.compile(r"(<!-- bench:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)", re.S)
NETWORK = {"lenet5": "LeNet-5", "mlp": "MLP", "resnet": "ResNet-8"}


def _load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _source(data: dict) -> str:
    known = {**data.get("versions", {}), **data}
    versions = ", ".join(f"{k} {known[k]}" for k in ("mindspore", "onnxruntime", "torch", "streamlit") if k in known)
    return f"`{data['command']}` — {data['date']}, {data['machine']}, Python {data['python']}, {versions}"


def accuracy() -> list[str]:
    data = _load("accuracy")
    rows = [_source(data), "",
            "| network, defaults (Momentum 0.01/0.9, batch 64, 10 epochs, Graph, Cell style) | official test accuracy "
            "| training time | exported ONNX, read by ONNX Runtime | exported MindIR, read by `ms.load` + `nn.GraphCell` |",
            "|---|---|---|---|---|"]
    for r in data["rows"]:
        agree = [f"{e['identical']:,} of {e['n']:,} identical (largest probability difference "
                 f"{e['max_probability_diff']:.1g})" for e in (r["export"]["onnx"], r["export"]["mindir"])]
        rows.append(f"| {NETWORK[r['network']]} | {100 * r['test_accuracy']:.2f} % | {r['training_s']:.1f} s | "
                    f"{agree[0]} | {agree[1]} |")
    return rows


def step_variants() -> list[str]:
    data = _load("step_variants")
    variants = list(dict.fromkeys(r["variant"] for r in data["rows"]))
    rows = [_source(data) + f", batch {data['batch']}, Graph mode, Cell style, median of {data['reps']} interleaved "
            "rounds", "", "| network | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for net in ("lenet5", "mlp"):
        cells = {r["variant"]: r for r in data["rows"] if r["network"] == net}
        rows.append(f"| {NETWORK[net]} | " + " | ".join(
            f"{cells[v]['median_step_ms']:.1f} ms" + ("" if v == "float32" else f" ({cells[v]['vs_float32']:.2f}×)")
            for v in variants) + " |")
    return rows


def augmentation() -> list[str]:
    data = _load("augmentation")
    rows = [_source(data), "", f"| LeNet-5, {data['epochs']} epochs | official test accuracy | training wall time |",
            "|---|---|---|"]
    for key, label in (("augment=false", "without augmentation"), ("augment=true", "with augmentation")):
        r = data["runs"][key]
        rows.append(f"| {label} | {100 * r['test_accuracy']:.2f} % | {r['train_wall_s']:.0f} s |")
    return rows


def distributed() -> list[str]:
    runs = {net: _load(f"distributed-{net}") for net in ("lenet5", "mlp")}
    rows = ["; ".join(_source(data) for data in runs.values()), "",
            "| network | 1 worker | 2 workers (msrun) | ratio |", "|---|---|---|---|"]
    for net, data in runs.items():
        one, two = data["summary"]["1"], data["summary"]["2"]
        rows.append(f"| {NETWORK[net]} | {one['epoch_s']:.2f} s per epoch ({one['wall_s']:.1f} s wall) | "
                    f"{two['epoch_s']:.2f} s ({two['wall_s']:.1f} s wall) | {data['ratio_2_over_1']:.2f}× the time |")
    return rows


def best_5k() -> list[str]:
    data = _load("best_5k")
    preset = next(r for r in data["rows"] if r["variant"] == "preset")  # the first seed's
    rows = [_source(data), "", "| variant (seed 42 unless said) | official test accuracy | vs the preset | training time |",
            "|---|---|---|---|"]
    for r in data["rows"]:
        name = f"preset (seed {r['seed']})" if r["variant"] == "preset" else r["variant"]
        change = "—" if r is preset else f"{100 * (r['test_accuracy'] - preset['test_accuracy']):+.2f} points"
        rows.append(f"| {name} | {100 * r['test_accuracy']:.2f} % | {change} | {r['training_s']:.1f} s |")
    seeds = [r for r in data["rows"] if r["variant"] == "preset"]
    accs, times = [100 * r["test_accuracy"] for r in seeds], [r["training_s"] for r in seeds]
    rows += ["", f"The preset over {len(seeds)} seeds: {min(accs):.2f}–{max(accs):.2f} % (mean "
                 f"{sum(accs) / len(accs):.2f} %), {min(times):.1f}–{max(times):.1f} s of training."]
    return rows


def finetune_cost() -> list[str]:
    data = _load("finetune_cost")
    rows = [_source(data) + f"; the base model: the `best-5k` preset on the bundled 5,000 images ({data['base_wall_s']:.0f} s), "
            f"fine-tuned on 20 drawings (2 per digit, {data['copies']} copies each, {data['fine_tune_epochs']} epochs, "
            f"learning rate {data['fine_tune_lr']:.2g} along a cosine; {data['fine_tune_wall_s']:.0f} s)", "",
            "| images | n | before | after | change |", "|---|---|---|---|---|"]
    for r in data["rows"]:
        rows.append(f"| {r['images']} | {r['n']:,} | {100 * r['before']:.2f} % | {100 * r['after']:.2f} % | "
                    f"{r['change_points']:+.2f} points |")
    return rows


def predict_latency() -> list[str]:
    data = _load("predict_latency")
    rows = [_source(data) + f"; {data['image']}, {data['rows'][0]['calls']} calls after the first", "",
            "| network | mode | per prediction (median) | first prediction | load (and compile, in Graph) |",
            "|---|---|---|---|---|"]
    for r in data["rows"]:
        mode = "Graph (the app's model service)" if r["mode"] == "graph" else "PyNative"
        rows.append(f"| {NETWORK[r['network']]} | {mode} | {r['median_ms']:.2f} ms | {r['first_ms']:.1f} ms | "
                    f"{r['load_s']:.2f} s |")
    return rows


def start_latency() -> list[str]:
    """bench/start_latency.py: Configure complete -> Start -> the Train page shows a step, cold and warm."""
    data = _load("start_latency")
    cases = [(net, warm) for net in ("lenet5", "mlp") for warm in (False, True)]
    rows = [_source(data), "", "| | " + " | ".join(f"{NETWORK[n]}, {'warm' if w else 'cold'}" for n, w in cases) + " |",
            "|---|" + "---|" * len(cases)]
    figures = [("Start → first live step on the page (from the click's pointerdown)", "click_to_first_live_step_s"),
               ("of which: the server's part (the click → the frame with the step reaches the browser)",
                "click_to_server_sent_first_step_s"),
               ("of which: the server's own part (the click → the step handed to the browser's connection, by "
                "the server's log; warm: the page Start opened)", "click_to_server_wrote_first_step_s"),
               ("of which: the browser drawing it (Chromium on the two cores the run trains on)", "browser_drawing_s"),
               ("the click → the run taken from the queue (the page, the dispatcher)", "click_to_worker_start_s"),
               ("the click → the first step done", "click_to_first_step_done_s"),
               ("the first graph call (compilation)", "first_call_s"),
               ("not in the figures: Playwright's click() → the pointerdown", "playwright_click_delay_s")]
    for name, key in figures:
        cells = []
        for net, warm in cases:
            values = [r[key] for r in data["rows"]
                      if r["network"] == net and r["warm_workers"] == warm and r.get(key) is not None]
            cells.append(f"{min(values):.2f}–{max(values):.2f} s" if values else "–")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _load_command(data: dict) -> str:
    return (f"python -m bench.load_test --sessions {data['sessions']} --browsers {data['browser_sessions_drawing']} "
            f"--seconds {round(data['seconds'] / 10) * 10:.0f}")


def load() -> list[str]:
    """bench/load_test.py: 60 live viewers alone, and with 6 Chromium drawing, while a run trains."""
    runs = [_load("load_viewers"), _load("load")]
    v = runs[0]["versions"]
    rows = [f"{runs[0]['date']} and {runs[1]['date']}, {runs[0]['machine']}, Python {runs[0]['python']}, "
            f"mindspore {v['mindspore']}, streamlit {v['streamlit']}", "",
            "| figure | " + " | ".join(f"`{_load_command(d)}`" for d in runs) + " | the aim |", "|---|---|---|---|"]

    def row(name: str, cell, aim: str = "") -> None:
        rows.append(f"| {name} | " + " | ".join(cell(d) for d in runs) + f" | {aim} |")

    row("errors", lambda d: f"{d['exceptions_shown'] + d['page_errors'] + d['crashes'] + d['watcher_errors']} "
        f"(exceptions shown, page errors, crashes, dropped connections); {d['server_log_tracebacks']} tracebacks in "
        "the server's log", "none")
    row("live updates per viewer", lambda d: f"{d['watcher_updates_per_s_each']:.2f}/s over the window, "
        f"**{d['watcher_steady_updates_per_s_each']:.2f}/s steady** (slowest {d['watcher_steady_min_updates_per_s']:.2f}); "
        f"interval at the end {', '.join(f'{i:g}' for i in d['poll_intervals_at_the_end'])} s", "≥ 0.5/s")
    row("training (LeNet-5, samples/s): alone · server idle · under load", lambda d: (
        f"{d['baseline_samples_per_s']:,.0f} · {d['server_idle_samples_per_s']:,.0f} · {d['under_load_samples_per_s']:,.0f}: "
        f"**{d['slowdown_vs_idle_server']:.2f}× slower than with the server idle** ({d['slowdown_vs_baseline']:.2f}× than alone)"),
        "≤ 1.5× against an idle server")
    row("drawing", lambda d: f"{d['strokes']} strokes by {d['browser_sessions_drawing']} browsers (one every 2 s "
        f"each when they get the CPU), {d['draw_sessions_with_a_prediction']} with a prediction shown"
        if d["browser_sessions_drawing"] else "–")
    row("CPU: the server · the load generators (lowest priority)", lambda d: f"{d['server_cpu_share']:.2f} of a core · "
        f"{d['generators_cpu_s'] / d['seconds']:.2f} of a core")
    row("server memory (RSS)", lambda d: f"{d['server_rss_first_mb']:.0f} → {d['server_rss_last_mb']:.0f} MB, "
        f"peak {d['server_peak_rss_mb']:.0f} MB", "bounded")
    return rows


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


def profile_step() -> list[str]:
    """bench/profile_step.py: LeNet-5's operator time per step by type, on MindSpore's operators and on the
    project's (the newest recording of each, with STUDIO_CUSTOM_KERNELS=0 and without)."""
    newest = {}
    for r in json.loads((RESULTS / "profile_step.json").read_text()):
        if r["network"] == "lenet5" and "operators" in r:
            newest[r["operators"]] = r
    kinds = sorted(newest, key=lambda k: not k.startswith("MindSpore"))
    head = "| operator type | " + " | ".join(f"{k} operators: ms per step (share)" for k in kinds) + " |"
    rows = ["`STUDIO_CUSTOM_KERNELS=0|1 python bench/profile_step.py lenet5` — "
            + "; ".join(f"{newest[k]['date']} ({k})" for k in kinds)
            + f", {newest[kinds[0]]['machine']}, mindspore {newest[kinds[0]]['mindspore']}, K = "
            + f"{newest[kinds[0]]['k']}, random batches of 64, under MindSpore's profiler", "", head,
            "|---|" + "---|" * len(kinds)]
    types = []
    for k in kinds:
        types += [t for t in newest[k]["share_by_type"] if t not in types]
    for t in types:
        cells = []
        for k in kinds:
            share = newest[k]["share_by_type"].get(t)
            cells.append(f"{share * newest[k]['ops_ms_per_step']:.2f} ({100 * share:.1f} %)" if share else "–")
        rows.append(f"| {t} | " + " | ".join(cells) + " |")
    rows.append("| **all operators** | " + " | ".join(f"**{newest[k]['ops_ms_per_step']:.2f}**" for k in kinds)
                + " |")
    rows.append("| the step, wall (profiled) | " + " | ".join(f"{newest[k]['wall_ms_per_step_profiled']:.2f}"
                                                         for k in kinds) + " |")
    return rows


def user_visible() -> list[str]:
    return user_visible_table(_load("user_visible"))


def page_times() -> list[str]:
    return page_times_table(_load("page_times"))


def summary_scale() -> list[str]:
    """bench/summary_import.py and bench/page_times.py --imported: importing and following summary folders, and
    the pages with the imported runs in the store beside the same store without them."""
    imp, pages = _load("summary_import"), _load("page_times_imported")
    rows = [_source(imp), "",
            f"- {imp['runs']} folders × {imp['steps_per_run']:,} steps ({imp['megabytes']} MB) imported in "
            f"{imp['import_wall_s']} s ({imp['steps_per_s']:,} steps/s, {imp['import_cpu_s']} s of CPU)",
            f"- a followed folder: {imp['watch_idle_update_cpu_ms']} ms of CPU per read when nothing is new, "
            f"{imp['watch_update_with_new_steps_cpu_ms']} ms when new steps arrived; 10 idle folders read every 2 s "
            f"cost {100 * imp['ten_idle_folders_every_2s_cpu_share']:.2f} % of a core", "",
            _source(pages) + f", {pages['runs_in_store']} studio runs; the same store with {pages['imported']} "
            f"imported runs of {pages['imported_steps']:,} steps beside it, servers alternating", "",
            "| page | later visits, s (median): studio runs | with the imported runs | ratio |", "|---|---|---|---|"]
    for page, ratio in pages["later_visit_ratio"].items():
        rows.append(f"| {page} | {pages['summary'][page]['later_visits_s']['median']:.2f} | "
                    f"{pages['summary_with_imported'][page]['later_visits_s']['median']:.2f} | {ratio:.2f} |")
    return rows


def store_backends() -> list[str]:
    data = _load("store_backends")
    m = data["medians"]
    kinds = [k for k in ("sqlite-before", "sqlite", "postgresql") if k in m]
    label = {"sqlite-before": "SQLite, the store before (sqlite3, ed17fa8)", "sqlite": "SQLite (SQLAlchemy)",
             "postgresql": f"PostgreSQL {data['postgresql']}"}

    def cell(kind: str, key: str, fmt: str, unit: str = "") -> str:
        return format(m[kind][key], fmt) + unit if key in m[kind] else "–"
    rows = [_source(data) + f", sqlalchemy {data['sqlalchemy']}, psycopg {data['psycopg']}, medians of "
            f"{len(data['rounds'])} interleaved rounds", "",
            "| store | steps recorded / s (8 a transaction, an epoch's records every 400) | per step | a page's reads of "
            "a 10,000-step run | submit | claim | checkpoint (1.1 MB) kept / fetched |", "|---|---|---|---|---|---|---|"]
    for kind in kinds:
        files = (f"{m[kind]['keep_ms']:.0f} ms / {m[kind]['fetch_ms']:.0f} ms" if "keep_ms" in m[kind]
                 else "in the folder")
        rows.append(f"| {label[kind]} | {cell(kind, 'steps_per_s', ',.0f')} | {1000 / m[kind]['steps_per_s']:.2f} ms "
                    f"| {cell(kind, 'page_reads_ms', '.1f', ' ms')} | {cell(kind, 'submit_ms', '.1f', ' ms')} "
                    f"| {cell(kind, 'claim_ms', '.1f', ' ms')} | {files} |")
    return rows


def server_cost() -> list[str]:
    data = _load("server_cost")
    rows = [_source(data) + f", sqlalchemy {data['sqlalchemy']}, psycopg {data['psycopg']}; {data['viewers']} "
            f"protocol-level viewers (bench/ws_client.py) on the live Train page while {data['run']}", "",
            "| setting | app servers' CPU (+ nginx's) | updates each viewer got / s (steady; slowest) | CPU per update "
            "| training, samples / s | errors |", "|---|---|---|---|---|---|"]
    for name, r in data["rows"].items():
        each = (f"{r['updates_per_s_each']:.2f} ({r['min_updates_per_s']:.2f})" if r["updates_per_s_each"] is not None
                else "–")
        per = f"{r['cpu_ms_per_update']:.1f} ms" if r["cpu_ms_per_update"] else "–"
        rows.append(f"| {name} | {r['server_cpu_s']:.1f} CPU-s in {r['seconds']:.0f} s | {each} | {per} | "
                    f"{r['samples_per_s']:,.0f} | {r['errors']} |")
    paper = data["cores_on_paper"]
    rows += ["", f"On paper, at one update a second per viewer and the dearer of the two costs: a class of 60 needs "
                 f"{paper['60']:.1f} cores of app servers, a school of 600 {paper['600']:.0f} cores (besides the "
                 "cores that train)."]
    return rows


def class_ws() -> list[str]:
    data = _load("class_ws")
    rows = [_source(data) + f", websockets {data['websockets']}; {data['phones']} phones (protocol-level clients, "
            f"bench/class_ws.py) on Draw & predict through the class link and the projector on Draw in presentation "
            f"mode, a round open, while {data['run']}; a sending phone draws a 7 every {data['send_every_s']:g} s "
            "(the canvas's update, then 📤 Send)", "",
            "| window | app server's CPU | drawings in the store (Send pressed) | page and fragment runs "
            "| training, samples / s | errors |", "|---|---|---|---|---|---|"]
    for name, r in data["rows"].items():
        sent = f"{r['drawings']} ({r['sends_pressed']})" if r["sends_pressed"] else "–"
        errors = len(r["errors"]) + len(r["exceptions"])
        rows.append(f"| {name} | {r['server_cpu_s']:.1f} CPU-s in {r['seconds']:.0f} s | {sent} | {r['page_runs']:,} "
                    f"| {r['samples_per_s']:,.0f} | {errors} |")
    drawing = data["rows"]["phones drawing"]
    rows += ["", f"Watching costs {data['cpu_ms_per_phone_second_watching']:.1f} CPU-ms per phone per second; each "
                 f"drawing sent {data['cpu_ms_per_drawing']:.0f} CPU-ms more (two page runs: the canvas's update and "
                 f"Send). While the class drew, the app server used {data['cores_while_drawing']:.2f} of a core and "
                 f"took {drawing['drawings'] / drawing['seconds']:.1f} drawings a second."]
    return rows


def class_cost() -> list[str]:
    data = _load("class_cost")
    mosaic = data["cpu_ms_per_mosaic"][-1]
    return [_source(data) + f"; {data['students']} students × {data['drawings_each']} drawings, read by an "
            f"{data['model']}, in the app server's code without Streamlit", "",
            "| step | CPU per call (median) |", "|---|---|",
            f"| a drawing sent: canvas → 28×28, read, kept | {data['cpu_ms_per_send_median']:.1f} ms "
            f"(90th percentile {data['cpu_ms_per_send_p90']:.1f} ms) |",
            f"| a phone's look: the round and its drawings | {data['cpu_ms_per_look_median']:.1f} ms |",
            f"| the mosaic of {mosaic[0]} drawings | {mosaic[1]:.1f} ms ({data['mosaic_bytes'][-1]:,} bytes of HTML) |"]


def remote_paths() -> list[str]:
    data = _load("remote_paths")
    rows = [_source(data) + f", optuna {data['optuna']}, distributed {data['distributed']}", "",
            "| round | the runs come back through | wall time of the 12-trial sweep | outcomes | best validation accuracy |",
            "|---|---|---|---|---|"]
    for i, r in enumerate(data["rows"]):
        way = "the relay (SQLite store)" if r["database"] == "sqlite" else "the database (PostgreSQL store)"
        outcomes = ", ".join(f"{n} {s}" for s, n in r["statuses"].items())
        rows.append(f"| {i // 2 + 1} | {way} | {r['wall_s']:.0f} s | {outcomes} | {r['best_val_acc']:.4f} |")
    m = data["median_wall_s"]
    rows += ["", f"Medians: {m['sqlite']:.1f} s through the relay, {m['postgresql']:.1f} s directly."]
    return rows


def queue_latency() -> list[str]:
    rows = []
    for name in ("queue", "queue-postgresql"):
        data = _load(name)
        rows += [_source(data) + f"; the store on {data['database']}, {counted(data['slots'], 'slot')}", ""]
    rows += ["| from the slot freeing (the run ahead finished) to ... | store | round 1 | round 2 | round 3 |",
             "|---|---|---|---|---|"]
    for key, what in (("taken_after_s", "the next run taken from the queue (`starting`)"),
                      ("first_step_after_s", "its first training step")):
        for name in ("queue", "queue-postgresql"):
            data = _load(name)
            cells = " | ".join(f"{r[key]:.2f} s" for r in data["latency"])
            rows.append(f"| {what} | {data['database'].split(',')[0]} | {cells} |")
    for name in ("queue", "queue-postgresql"):
        ten = _load(name)["ten_submitters"]
        rows.append("")
        rows.append(f"Ten submitters at once on {_load(name)['database'].split(',')[0]}: {ten['runs']} runs, started "
                    f"this many times each: {', '.join(map(str, ten['starts_per_run']))}; all completed in "
                    f"{ten['wall_s']:.0f} s, started in the queue's order: "
                    f"{'yes' if ten['started_order'] == ten['queued_order'] else 'no'}.")
    return rows


MLP_PRODUCTS = {  # oneDNN's name of a product (src MxK : weights KxN) -> what it is in the MLP's step
    "64x784:784x512": "layer 1 forward", "64x512:512x512": "layer 2 forward + layer 2 input gradient",
    "64x512:512x10": "layer 3 forward", "512x64:64x784": "layer 1 weight gradient",
    "512x64:64x512": "layer 2 weight gradient", "10x64:64x512": "layer 3 weight gradient",
    "64x10:10x512": "layer 3 input gradient"}


def mlp_matmuls() -> list[str]:
    """bench/mlp_matmuls.py: the MLP's matrix products per step, MindSpore's (in the graph) vs PyTorch's (alone)."""
    data = _load("mlp_matmuls")
    by = data["ms_per_step_by_shape"]
    rows = [_source(data) + f", medians of {data['reps']} alternating rounds", "",
            "| product (oneDNN's shape) | MindSpore, in the training graph | PyTorch, alone | ratio |",
            "|---|---|---|---|"]
    for shape, what in MLP_PRODUCTS.items():
        m, t = by["mindspore"][shape], by["pytorch"][shape]
        rows.append(f"| {what} ({shape}) | {m:.3f} ms | {t:.3f} ms | {m / t:.2f}× |")
    m, t = data["sum_ms_per_step"]["mindspore"], data["sum_ms_per_step"]["pytorch"]
    flop = mlp_flop_per_step()
    rows.append(f"| **all, per step** ({flop / 1e6:.0f} MFLOP) | **{m:.3f} ms** ({flop / m / 1e6:.0f} GFLOP/s) | "
                f"**{t:.3f} ms** ({flop / t / 1e6:.0f} GFLOP/s) | **{m / t:.2f}×** |")
    return rows


def mlp_flop_per_step() -> int:
    """Floating-point operations of the MLP's products in a step: 2·m·k·n each, layer 2's shape twice."""
    total = 0
    for shape, what in MLP_PRODUCTS.items():
        (m, k), (_, n) = (tuple(int(d) for d in side.split("x")) for side in shape.split(":"))
        total += 2 * m * k * n * (2 if "+" in what else 1)
    return total


def calls_per_epoch() -> list[str]:
    """bench/calls_per_epoch.py: 70 training steps as calls of K steps, K alternated in one process."""
    runs = {net: _load(f"calls_per_epoch-{net}") for net in ("lenet5", "mlp")}
    rows = ["; ".join(_source(data) + f", {data['rounds']} rounds" for data in runs.values()), "",
            "| network | K (calls for 70 steps) | 70 steps, median | vs the first K, median of the rounds' ratios |",
            "|---|---|---|---|"]
    for net, data in runs.items():
        for r in data["rows"]:
            rows.append(f"| {NETWORK[net]} | {r['k']} ({r['calls']}) | {r['median_ms']:.1f} ms | "
                        f"{r['median_ratio']:.3f}× (rounds {r['ratio_range'][0]:.2f}–{r['ratio_range'][1]:.2f}) |")
    return rows


def loop_breakdown() -> list[str]:
    """bench/loop_breakdown.py: where an epoch's time goes through the command line."""
    data = _load("loop_breakdown")
    from bench.loop_breakdown import PARTS as parts  # the bench's own names for the parts it times
    rows = [_source(data) + f", medians over epochs 3–{data['epochs']} of the bundled images", "",
            "| network | epoch | " + " | ".join(parts) + " |", "|---|---|" + "---|" * len(parts)]
    for r in data["rows"]:
        rows.append(f"| {NETWORK[r['network']]} | {r['epoch_ms']:.1f} ms | " + " | ".join(
            f"{r[p]:.1f} ms ({100 * r[p] / r['epoch_ms']:.0f} %)" for p in parts) + " |")
    return rows


def drawn_digits() -> list[str]:
    data = _load("drawn_digits")
    pens = sorted(int(k.rsplit("_", 1)[1]) for k in data["rows"][0] if k.startswith("drawn_pen_"))
    rows = [_source(data), "", f"{data['drawings']}; the models: {data['checkpoints']}.", "",
            "| model | official test set (10,000) | with the four 1-pixel shifts | drawn: as the page reads them "
            "(both readings) | with the four 1-pixel shifts | evened only | as drawn only | "
            + " | ".join(f"{p} px pen" for p in pens) + " |",
            "|---|---|---|---|---|---|---|" + "---|" * len(pens)]
    for r in data["rows"]:
        rows.append(f"| {r['label']} | {100 * r['test_set']:.2f} % | {100 * r['test_set_shifted']:.2f} % | "
                    f"{100 * r['drawn']:.2f} % | {100 * r['drawn_shifted']:.2f} % | "
                    f"{100 * r['drawn_evened']:.2f} % | {100 * r['drawn_as_drawn']:.2f} % | "
                    + " | ".join(f"{100 * r[f'drawn_pen_{p}']:.2f} %" for p in pens) + " |")
    return rows


def pynative_account() -> list[str]:
    """bench/pynative_account.py: one operator's dispatch in each mode, and a training step's time in each."""
    data = _load("pynative_account")
    add = data["us_per_add"]
    rows = [_source(data), "",
            f"One `ops.add` of two (64, 10) tensors, {data['n_adds']} in a row (median of {data['reps']} processes per "
            f"mode): **PyNative {add['pynative']:.1f} µs**, Graph {add['graph']:.1f} µs (one graph of "
            f"{data['n_adds']} additions).", "",
            "| network | kernel launches per PyNative step (profiler) | PyNative, ms per step | Graph, one step per "
            f"call | Graph, {data['k']} steps per call (the studio's) | PyNative ÷ Graph (the studio's) | PyNative ÷ "
            "Graph, one per call | Graph one per call + launches × (PyNative − Graph per operator) |",
            "|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        rows.append(f"| {r['network']} | {r['launches_per_step']:g} | {r['pynative_ms']:.2f} | "
                    f"{r['graph_one_per_call_ms']:.2f} | {r['graph_k_per_call_ms']:.2f} | {r['pynative_vs_graph_k']:.2f}× | "
                    f"{r['pynative_vs_graph_one']:.2f}× | {r['predicted_pynative_ms']:.2f} |")
    return rows


def start_just_started() -> list[str]:
    """bench/start_latency.py --just-started: the first Start on a server just started, clicked at once."""
    return _medians_by_network(_load("start_latency_just_started"), [
        ("the server answers (its start)", "server_answered_after_s", " s"),
        ("Start → first live step on the page (from the click's pointerdown)", "click_to_first_live_step_s", " s"),
        ("the click → the first step done", "click_to_first_step_done_s", " s"),
        ("the first step done → on the page", "first_step_done_to_page_s", " s")])


def start_server_part() -> list[str]:
    """bench/start_server_part.py: a warm Start through a websocket client, no browser on the machine."""
    return _medians_by_network(_load("start_server_part"), [
        ("the click → the first step on the wire (the server's part of Start)", "click_to_step_on_the_wire_s", " s"),
        ("the click → the run queued (Configure's run with the click)", "click_to_queued_s", " s"),
        ("the click → the first step done (the warm worker)", "click_to_first_step_done_s", " s"),
        ("CPU-seconds of the server in that time", "server_cpu_s", ""),
        ("CPU-seconds of the workers in that time", "workers_cpu_s", "")])


def _medians_by_network(data: dict, figures: list[tuple[str, str, str]]) -> list[str]:
    """A row per (name, key, unit) of figures: each network's median (range) of its rows' key."""
    rows = [_source(data), "", "| | " + " | ".join(NETWORK[n] for n in ("lenet5", "mlp")) + " |", "|---|---|---|"]
    for name, key, unit in figures:
        cells = []
        for net in ("lenet5", "mlp"):
            values = sorted(r[key] for r in data["rows"] if r["network"] == net and r.get(key) is not None)
            cells.append(f"median {values[len(values) // 2]:.2f}{unit} ({values[0]:.2f}–{values[-1]:.2f})" if values
                         else "–")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


TABLES: dict[str, Callable[[], list[str]]] = {
    "accuracy": accuracy, "step-variants": step_variants, "augmentation": augmentation,
    "distributed": distributed, "user-visible": user_visible, "page-times": page_times, "best-5k": best_5k,
    "finetune-cost": finetune_cost, "predict-latency": predict_latency, "load": load,
    "start-latency": start_latency, "start-just-started": start_just_started, "store-backends": store_backends,
    "server-cost": server_cost, "remote-paths": remote_paths, "queue-latency": queue_latency,
    "profile-step": profile_step, "mlp-matmuls": mlp_matmuls, "loop-breakdown": loop_breakdown,
    "calls-per-epoch": calls_per_epoch, "summary-scale": summary_scale, "class-ws": class_ws,
    "class-cost": class_cost, "drawn-digits": drawn_digits, "pynative-account": pynative_account,
    "start-server-part": start_server_part}
FILES = {"queue-latency": ["queue.json", "queue-postgresql.json"], "remote-paths": ["remote_paths.json"], "server-cost": ["server_cost.json"], "store-backends": ["store_backends.json"], "start-latency": ["start_latency.json"], "start-just-started": ["start_latency_just_started.json"], "load": ["load_viewers.json", "load.json"], "predict-latency": ["predict_latency.json"], "best-5k": ["best_5k.json"], "finetune-cost": ["finetune_cost.json"], "accuracy": ["accuracy.json"], "step-variants": ["step_variants.json"], "augmentation": ["augmentation.json"],
         "distributed": ["distributed-lenet5.json", "distributed-mlp.json"], "user-visible": ["user_visible.json"],
         "page-times": ["page_times.json"], "profile-step": ["profile_step.json"],
         "mlp-matmuls": ["mlp_matmuls.json"], "loop-breakdown": ["loop_breakdown.json"],
         "calls-per-epoch": ["calls_per_epoch-lenet5.json", "calls_per_epoch-mlp.json"],
         "summary-scale": ["summary_import.json", "page_times_imported.json"], "class-ws": ["class_ws.json"],
         "class-cost": ["class_cost.json"], "drawn-digits": ["drawn_digits.json"],
         "pynative-account": ["pynative_account.json"],
         "start-server-part": ["start_server_part.json"]}  # what each table is made of


def render(name: str) -> str:
    return "\n".join(TABLES[name]()) + "\n"


def blocks(text: str) -> list[tuple[str, str]]:
    """(name, body) of every marked block in a document."""
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def stale(documents=DOCUMENTS) -> list[str]:
    """Every marked block whose text is not what its results file gives (empty: all as recorded)."""
    return [f"{doc.name}: {name}" for doc in documents for name, body in blocks(doc.read_text())
            if body != render(name)]


def write() -> list[str]:
    """Fill every marked block from its results file; the documents changed."""
    changed = []
    for doc in DOCUMENTS:
        text = doc.read_text()
        new = BLOCK.sub(lambda m: m.group(1) + render(m["name"]) + m.group(4), text)
        if new != text:
            doc.write_text(new)
            changed.append(str(doc.relative_to(ROOT)))
    return changed
