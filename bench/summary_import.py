"""What opening summary folders costs: RUNS training folders of STEPS steps each (a loss scalar and a learning
rate a step, a histogram and an image every EVERY steps, as SummaryCollector writes them with MindSpore's own
message classes), imported into a fresh SQLite store; then a watched folder that grows: the CPU one update costs
when nothing is new, and when EVERY new steps arrived.

    .venv/bin/python -m bench.summary_import                      # 100 runs x 10,000 steps (~minutes here)
    .venv/bin/python -m bench.summary_import --runs 10 --steps 1000

Results: bench/results/summary_import.json (a benchmark: nothing here passes or fails on a time).
"""
from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.record import save, stamp
from core.app.summary_import import SummaryImport
from core.runs.store import RunStore
from core.summaries.proto_classes import summary_messages
from core.summaries.records import frame


def write_folder(folder: Path, steps: int, every: int, rng: np.random.Generator) -> int:
    """A training folder as SummaryCollector writes one; its size in bytes."""
    from PIL import Image
    m = summary_messages()
    png = io.BytesIO()
    Image.fromarray((rng.random((28, 28)) * 255).astype(np.uint8)).save(png, "PNG")
    folder.mkdir(parents=True)
    out = bytearray()
    for step in range(1, steps + 1):
        event = m.Event(wall_time=time.time(), step=step)
        loss = event.summary.value.add(tag="loss/auto")
        loss.scalar_value = float(2.3 * np.exp(-step / steps))
        rate = event.summary.value.add(tag="learning_rate/auto")
        rate.scalar_value = 0.01 if step < steps // 2 else 0.001
        if step % every == 0:
            hist = event.summary.value.add(tag="conv1.weight/auto").histogram
            counts, edges = np.histogram(rng.normal(size=150), bins=30)
            for left, right, count in zip(edges, edges[1:], counts, strict=False):
                hist.buckets.add(left=float(left), width=float(right - left), count=int(count))
            hist.min, hist.max, hist.count, hist.sum = float(edges[0]), float(edges[-1]), 150, 0.0
            image = event.summary.value.add(tag="input_data/auto").image
            image.height, image.width, image.colorspace, image.encoded_image = 28, 28, 1, png.getvalue()
        out += frame(event.SerializeToString())
    (folder / f"events.out.events.summary.{int(time.time())}.bench_MS").write_bytes(out)
    return len(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=100)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = sum(write_folder(root / "summaries" / f"run-{i:03d}", args.steps, args.every, rng)
                   for i in range(args.runs))
        store = RunStore(root / "store")
        began, cpu = time.perf_counter(), time.process_time()
        for folder in sorted((root / "summaries").iterdir()):
            SummaryImport(store, folder).update(final=True)
        wall, cpu_s = time.perf_counter() - began, time.process_time() - cpu
        assert len(store.list_runs()) == args.runs
        watched = _watch_costs(root, store, args, rng)
    record = {"command": f"python -m bench.summary_import --runs {args.runs} --steps {args.steps} "
                         f"--every {args.every}", **stamp("protobuf", "google-crc32c", "sqlalchemy"),
              "runs": args.runs, "steps_per_run": args.steps, "megabytes": round(size / 1e6, 1),
              "import_wall_s": round(wall, 1), "import_cpu_s": round(cpu_s, 1),
              "steps_per_s": round(args.runs * args.steps / wall), **watched}
    print(record)
    save("summary_import", record)


def _watch_costs(root: Path, store: RunStore, args, rng) -> dict:
    """One update of a watched folder: when nothing is new (what 10 idle watched folders cost every 2 s), and
    when `every` steps arrived."""
    folder = root / "summaries" / "run-000"
    follow = SummaryImport(store, folder)
    follow.update(final=False)
    began = time.process_time()
    for _ in range(20):
        follow.update(final=False)
    idle_ms = (time.process_time() - began) / 20 * 1000
    (path,) = folder.glob("*_MS")
    m = summary_messages()
    with open(path, "ab") as f:
        for step in range(args.steps + 1, args.steps + args.every + 1):
            event = m.Event(wall_time=time.time(), step=step)
            event.summary.value.add(tag="loss/auto").scalar_value = 0.1
            f.write(frame(event.SerializeToString()))
    began = time.process_time()
    follow.update(final=False)
    grown_ms = (time.process_time() - began) * 1000
    return {"watch_idle_update_cpu_ms": round(idle_ms, 1), "watch_update_with_new_steps_cpu_ms": round(grown_ms, 1),
            "ten_idle_folders_every_2s_cpu_share": round(10 * idle_ms / 2000, 4)}


if __name__ == "__main__":
    main()
