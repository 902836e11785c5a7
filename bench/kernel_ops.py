"""The project's C++ operators one by one at LeNet-5's shapes (batch 64), this work tree's build against another
commit's, interleaved (a benchmark that prints figures, not a test).

    .venv/bin/python -m bench.kernel_ops [--against REV] [--reps 7]

Both builds use core.kernels.library's compiler flags for this CPU; each operator is called through MindSpore's
calling convention (ctypes), 10 calls per timing, the best of --reps rounds taken, the builds alternating.
It also checks that both builds give the same bits. Records bench/results/kernel_ops.json (date, versions, the
CPU's vector extensions).
"""
from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import save, stamp  # noqa: E402
from core.kernels.library import FLAGS, HEADERS, SOURCES  # noqa: E402

BATCH = 64
CALLS = 10


def operands() -> dict[str, list[np.ndarray]]:
    """Each operator's inputs, then its output, at LeNet-5's shapes (MindSpore's order: inputs, then outputs)."""
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x1, w1 = f32(BATCH, 1, 28, 28), f32(6, 1, 5, 5)
    x2, w2 = f32(BATCH, 6, 14, 14), f32(16, 6, 5, 5)
    zeros = np.zeros_like
    return {
        "conv_1ch_fwd": [x1, w1, np.zeros((BATCH, 6, 28, 28), np.float32)],
        "conv_1ch_grad_filter": [x1, f32(BATCH, 6, 28, 28), w1, zeros(w1)],
        "conv_1ch_grad_input": [x1, w1, f32(BATCH, 6, 28, 28), zeros(x1)],
        "conv_valid_fwd": [x2, w2, np.zeros((BATCH, 16, 10, 10), np.float32)],
        "conv_valid_grad_filter": [x2, f32(BATCH, 16, 10, 10), w2, zeros(w2)],
        "conv_valid_grad_input": [x2, w2, f32(BATCH, 16, 10, 10), zeros(x2)],
    }


def caller(lib: ctypes.CDLL, name: str, arrays: list[np.ndarray]):
    """A function that calls lib's operator name on arrays once (ops.Custom's aot signature)."""
    n = len(arrays)
    dims = [(ctypes.c_int64 * a.ndim)(*a.shape) for a in arrays]
    args = ((ctypes.c_void_p * n)(*[a.ctypes.data for a in arrays]), (ctypes.c_int * n)(*[a.ndim for a in arrays]),
            (ctypes.POINTER(ctypes.c_int64) * n)(*[ctypes.cast(d, ctypes.POINTER(ctypes.c_int64)) for d in dims]),
            (ctypes.c_char_p * n)(*[b"float32"] * n))
    function = getattr(lib, name)

    def call():
        if function(n, *args, None, None) != 0:
            raise RuntimeError(f"{name} failed at these shapes")
    return call


def build(sources_dir: Path, out: Path) -> ctypes.CDLL:
    sources = sorted(str(p) for p in sources_dir.glob("*.cc"))
    subprocess.run(["g++", *FLAGS, "-o", str(out), *sources], check=True)
    return ctypes.CDLL(str(out))


def checkout(rev: str, into: Path) -> Path:
    """The operators' sources of commit rev, written into a folder."""
    into.mkdir()
    for path in (*SOURCES, *HEADERS):
        relative = path.relative_to(ROOT).as_posix()
        text = subprocess.run(["git", "show", f"{rev}:{relative}"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
        (into / path.name).write_text(text)
    return into


def best_ms(call, reps_done: list[float]) -> None:
    started = time.perf_counter()
    for _ in range(CALLS):
        call()
    reps_done.append((time.perf_counter() - started) / CALLS * 1000)


def vector_extensions() -> str:
    flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    return " ".join(sorted({f for f in flags.split() if f.startswith(("avx", "fma"))})) or "none"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="HEAD", help="the commit whose operators to compare with (default HEAD)")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kernel-ops-") as tmp:
        builds = {"this tree": build(SOURCES[0].parent, Path(tmp) / "tree.so"),
                  args.against: build(checkout(args.against, Path(tmp) / "rev"), Path(tmp) / "rev.so")}
        cases = {label: operands() for label in builds}  # each build its own arrays: outputs compared after
        calls = {label: {name: caller(lib, name, cases[label][name]) for name in cases[label]}
                 for label, lib in builds.items()}
        times: dict[str, dict[str, list[float]]] = {label: {name: [] for name in cases[label]} for label in builds}
        for _ in range(args.reps):
            for name in cases["this tree"]:
                for label in builds:  # the builds alternate, operator by operator
                    best_ms(calls[label][name], times[label][name])
        rows = []
        for name in cases["this tree"]:
            ours, theirs = (min(times[label][name]) for label in builds)
            same = np.array_equal(cases["this tree"][name][-1], cases[args.against][name][-1])
            rows.append({"operator": name, "this_tree_ms": round(ours, 3), "against_ms": round(theirs, 3),
                         "ratio": round(ours / theirs, 3), "same_bits": bool(same)})
            print(f"{name:24s} {ours:7.3f} ms   {args.against}: {theirs:7.3f} ms   {ours / theirs:5.2f}x   "
                  f"{'same bits' if same else 'DIFFERENT BITS'}")
    total = [sum(r[k] for r in rows) for k in ("this_tree_ms", "against_ms")]
    print(f"{'all six':24s} {total[0]:7.3f} ms   {args.against}: {total[1]:7.3f} ms   {total[0] / total[1]:5.2f}x")
    save("kernel_ops", {"command": "python -m bench.kernel_ops " + " ".join(sys.argv[1:] if argv is None else argv),
                        **stamp(), "cpu_vector_extensions": vector_extensions(), "against": args.against,
                        "batch": BATCH, "rows": rows})
    return 0 if all(r["same_bits"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
