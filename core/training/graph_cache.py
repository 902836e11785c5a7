"""A training process's first graphs kept on disk, so that the next process of the same graphs (a warm worker,
a run's worker, the command line) loads them instead of compiling them again (MindSpore's compile cache, in a
folder of our own for each key).

MindSpore's compile cache (`enable_compile_cache`, `compile_cache_path`) knows a folder's graphs only by the
order in which a process compiled them and by a hash of the entry script's imports: a process that compiles
other graphs in the same folder loads the wrong ones without an error (docs/performance.md). So the cache is used
here only where the order is fixed and under a key that names everything that shapes the graphs:
- only in a process that trains runs (allow(): the worker, the command line's training, the warm worker), for
  its first model's first graphs (a warm worker's prepared model, or a fresh single-process run's step graphs
  compiled ahead: core.training.prepared), and switched off again at once: what the process compiles later
  (validation, single steps, another model) is neither written nor loaded. MindSpore fixes the folder at the
  first compilation it caches, and numbers the graphs from there: once per process;
- one folder per key: the graph settings and steps per epoch (core.training.prepared.graph_settings), the
  project's source (every file of core/), the C++ operators' library where the process loaded it, MindSpore's
  and Python's versions, the system and its CPU's model (a home folder may be shared by hosts with other CPUs),
  the entry script, the mode and device, and the environment MindSpore and oneDNN read;
- a folder is used only once complete: compiled into a private folder, then renamed into place with a marker
  (a process killed while compiling leaves nothing that another would load). The newest KEEP folders stay.

$STUDIO_GRAPH_CACHE_DIR, else the user's cache (core/user_cache.py: ~/.cache/mindspore-studio/graphs);
STUDIO_GRAPH_CACHE=0 compiles always.
"""
from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from core.kernels.library import cpu_model, loaded
from core.user_cache import user_cache_dir

__all__ = ["SWITCH", "KEEP", "cache_dir", "switched_off", "allow", "available", "key_of", "folder_for",
           "compile_once"]

SWITCH = "STUDIO_GRAPH_CACHE"  # 0 / off / false: every process compiles its graphs
KEEP = 16  # folders kept (under 1 MB each for these networks): the newest used
COMPLETE = "complete"  # the marker of a folder another process may load
GRAPH_FILE = Path("rank_0") / "graph_cache" / "compile_cache_0.mindir"  # what MindSpore writes for the first graph
_ENV_PREFIXES = ("MS_", "GLOG_", "ONEDNN_", "DNNL_", "OMP_", "KMP_", "STUDIO_CUSTOM_KERNELS", "STUDIO_LOAD")
_STALE_S = 3600.0  # a private folder this old belonged to a process that died while compiling
_PROJECT = Path(__file__).resolve().parents[1]  # core/
_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr


def cache_dir() -> Path:
    return user_cache_dir("graphs", "STUDIO_GRAPH_CACHE_DIR")


def switched_off() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "false", "no")


@lru_cache(maxsize=1)
def _source_digest() -> str:
    """Every file of core/ (the networks, steps, losses and operators' bindings the graphs are traced from)."""
    digest = hashlib.sha256()
    for path in sorted(_PROJECT.rglob("*.py")):
        digest.update(str(path.relative_to(_PROJECT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key_of(graph_parts: Sequence[str]) -> str:
    """The key of graphs described by graph_parts (their settings), compiled by this process's code, library and
    environment."""
    import mindspore as ms  # deferred: MindSpore

    kernels = loaded()  # the graphs call the library only if this process loaded it before compiling them
    environment = sorted(f"{k}={v}" for k, v in os.environ.items()
                         if k.startswith(_ENV_PREFIXES) and not k.startswith("MS_COMPILER_CACHE"))
    parts = ["graph cache 1", *graph_parts, _source_digest(), str(kernels),
             str(kernels.stat().st_size) if kernels else "", ms.__version__, sys.version, platform.platform(),
             cpu_model(), os.path.abspath(sys.argv[0]), str(ms.get_context("mode")),
             str(ms.get_context("device_target")), *environment]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def folder_for(key: str, root: Path | None = None) -> Path:
    return (root or cache_dir()) / f"graphs-{key}"


_allowed = False  # this process trains runs (allow)
_used = False  # MindSpore fixes a process's cache folder at the first compilation it caches: one use per process


def allow() -> None:
    """Say that this process trains runs, so that its first model's graphs may come from the cache (the
    entry points of training processes call it; elsewhere, tests and pages, nothing is cached)."""
    global _allowed
    _allowed = True


def available() -> bool:
    """Whether the next compile_once may use the cache: allowed, not used yet in this process, not switched off,
    and MindSpore has the entry script it keys its own files by (`python -c` has none)."""
    return _allowed and not _used and not switched_off() and os.path.isfile(sys.argv[0])


def compile_once(graph_parts: Sequence[str], compile_graphs: Callable[[], None]) -> str:
    """Run compile_graphs (it compiles graphs and nothing else) with MindSpore's compile cache in the folder of
    graph_parts' key, if available(). Returns "loaded" (the folder was complete: MindSpore loaded the graphs),
    "saved" (compiled, and the folder is now there for the next process), or "compiled" (without the cache)."""
    global _used
    if not available():
        compile_graphs()
        return "compiled"
    _used = True
    import mindspore as ms  # deferred: MindSpore

    root = cache_dir()
    folder = folder_for(key_of(graph_parts), root)
    if (folder / COMPLETE).exists():
        (folder / COMPLETE).touch()  # the newest used stay (_prune)
        _with_cache(ms, folder, compile_graphs)
        return "loaded"
    root.mkdir(parents=True, exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix=".compiling-", dir=root))
    try:
        _with_cache(ms, private, compile_graphs)
        if not (private / GRAPH_FILE).is_file():
            raise OSError(f"MindSpore wrote no {GRAPH_FILE} in {private}")
        (private / COMPLETE).write_text(f"{time.time()}\n")
        os.rename(private, folder)  # fails if another process put the same graphs there first: theirs stay
    except OSError as e:
        if not (folder / COMPLETE).exists():
            _LOG.warning("the compiled graphs could not be kept in %s (%s): the next warm worker compiles them "
                         "again; check that folder's space and permissions, or set %s=0", root, e, SWITCH)
        return "compiled"
    finally:
        if private.exists():
            shutil.rmtree(private, ignore_errors=True)
    _prune(root)
    return "saved"


def _with_cache(ms, folder: Path, compile_graphs: Callable[[], None]) -> None:
    ms.set_context(enable_compile_cache=True, compile_cache_path=str(folder))
    try:
        compile_graphs()
    finally:
        ms.set_context(enable_compile_cache=False)


def _prune(root: Path) -> None:
    """Keep the KEEP folders used last; drop private folders of processes that died while compiling."""
    done = sorted((p for p in root.glob("graphs-*") if (p / COMPLETE).exists()),
                  key=lambda p: (p / COMPLETE).stat().st_mtime, reverse=True)
    stale = [p for p in root.glob(".compiling-*") if time.time() - p.stat().st_mtime > _STALE_S]
    for path in done[KEEP:] + stale:
        shutil.rmtree(path, ignore_errors=True)
