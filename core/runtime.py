"""Process-wide MindSpore settings that must be chosen before `import mindspore`.

oneDNN in mindspore 2.10 picks a reference convolution on AVX-512 CPUs that is ~20x slower than the
AVX2 one; capping the ISA at AVX2 fixes convolutions but slows the matmul-only MLP. The cap is
process-wide, so each training process picks it for its network (see bench/ for the measurements).
"""
from __future__ import annotations

import gc
import os
import sys

from core.networks import known_network

APP_ISA = "AVX2"  # the app process predicts with every network; convolutions dominate there
_CHOSEN_MARK = "STUDIO_CHOSE_ONEDNN_ISA"  # set when the value below was our choice, not the user's

# In a graph of K training steps MindSpore copies every weight it reads (a TensorMove per weight and step),
# although the graph's UpdateState nodes already order every reader of a weight before the optimizer's in-place
# write. Level 3 inserts no copies (1 is MindSpore's default, kept where the copies cost nothing measurable):
# the MLP trains ~4 % more samples per second (docs/performance.md). The tests run with level 3, and
# tests/process/test_teaching.py checks that K steps per call still train the same weights bit for bit as one per call.
LOAD_COPIES = "MS_DEV_SIDE_EFFECT_LOAD_ELIM"  # its level per network: NetworkSpec.load_copies

# numpy asks Linux for 2 MB pages for every array of 4 MB or more (madvise). On the virtual machines this studio
# is measured on, the first touch of such a page costs ~10 ms: the first batch of a run, written into the 14 MB
# array of normalised images (core/data/memory_batches.py), took 100-160 ms of Start, and np.ones of 14 MB took
# 0.15 s against 0.011 s with 4 kB pages (docs/performance.md). The studio's large numpy arrays are read a batch at a
# time, where 2 MB pages gain nothing measurable; MindSpore's own memory is not numpy's. A value the user set is kept.
HUGE_PAGES = "NUMPY_MADVISE_HUGEPAGE"


# Python's collector at its default thresholds (700, 10, 10) ran ~460 collections, 0.18-0.24 s of them full ones
# over a growing heap, while a training process imported MindSpore and the studio (~190,000 objects that live as
# long as the process); at these, 6 and none (docs/performance.md, "Collections while a process imports"). The app
# server's too.
GC_THRESHOLDS = (50_000, 20, 100)


def prepare_process(network: str | None = None) -> bool:
    """Set the environment for this process's MindSpore, and fewer garbage collections (GC_THRESHOLDS). Returns
    False if mindspore was already imported (the settings then cannot take effect). A value the user set
    explicitly is respected."""
    gc.set_threshold(*GC_THRESHOLDS)
    os.environ.setdefault("GLOG_v", "3")  # keep the console free of MindSpore's INFO/WARNING noise
    spec = known_network(network)  # the fastest measured settings, per network
    isa = APP_ISA if network is None else spec and spec.onednn_isa
    if os.environ.pop(_CHOSEN_MARK, None):  # a cap another process chose for its own network (this environment
        os.environ.pop("ONEDNN_MAX_CPU_ISA", None)  # came from it as is), not the user's: choose for this one
    if isa and "ONEDNN_MAX_CPU_ISA" not in os.environ:
        os.environ["ONEDNN_MAX_CPU_ISA"] = isa
        os.environ[_CHOSEN_MARK] = "1"
    if copies := spec and spec.load_copies:
        os.environ.setdefault(LOAD_COPIES, copies)
    _numpy_page_size()
    return "mindspore" not in sys.modules


def _numpy_page_size() -> None:
    """Small pages for numpy's arrays (HUGE_PAGES above), in this process and its children."""
    os.environ.setdefault(HUGE_PAGES, "0")
    numpy = sys.modules.get("numpy")  # numpy reads the variable when it is imported; after that, its own switch
    if numpy is not None:
        numpy.core.multiarray._set_madvise_hugepage(os.environ[HUGE_PAGES] != "0")


def settle_heap() -> None:
    """Collect this process's garbage, then leave every object alive now out of later collections (gc.freeze):
    a training process's modules, its store and MindSpore's own live as long as it does. MindSpore runs a full
    collection before it compiles each graph, over everything a process holds: 0.09-0.12 s over a worker's
    ~190,000 objects, three or more times a run, and far longer in a process that holds more
    (docs/performance.md, "Garbage collections and validation batches"). What dies after it was frozen is freed
    by reference counting, but not when it sits in a reference cycle: a process that goes on to other work calls
    release_heap first."""
    gc.collect()
    gc.freeze()


def release_heap() -> None:
    """Every object counts in collections again (the next settle_heap collects what died since it froze)."""
    gc.unfreeze()


_gc_tuned = False


def tune_gc_for_server() -> None:
    """Once per process: fewer, cheaper garbage collections in the app server. Each drawn stroke arrives as
    a 280x280x4 list of numbers (~300,000 Python objects); with the default thresholds the collector ran
    full passes over them on the event-loop thread, pausing every session (bench/load_test.py)."""
    global _gc_tuned
    if _gc_tuned:
        return
    settle_heap()  # what is loaded by now lives as long as the server: never scan it again
    gc.set_threshold(*GC_THRESHOLDS)
    _gc_tuned = True


def child_environment(**extra: str) -> dict[str, str]:
    """This process's environment for a child that picks its own settings: drops the oneDNN cap this
    process chose for itself, keeps one the user set."""
    env = dict(os.environ, **extra)
    if env.pop(_CHOSEN_MARK, None):
        env.pop("ONEDNN_MAX_CPU_ISA", None)
    return env


def set_mode(mode: str) -> None:
    """Select Graph or PyNative execution; PyNative gets blocking launches (far steadier step times on CPU)."""
    import mindspore as ms  # deferred: this module sets what must be set before mindspore is imported
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    elif mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
        ms.runtime.launch_blocking()
    else:
        raise ValueError(f"unknown mode {mode!r}")
