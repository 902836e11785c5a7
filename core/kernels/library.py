"""The project's C++ operators, compiled on first use into a shared library in a cache outside the work tree.

MindSpore's ops.Custom(func_type="aot") runs a function of a shared library inside a Graph-mode or PyNative
network on CPU. The library is built once per source, compiler and CPU (g++ -O3 -march=native) into
$STUDIO_KERNEL_CACHE, else $XDG_CACHE_HOME/mindspore-studio/kernels, else ~/.cache/mindspore-studio/kernels,
by one process while the others that need it wait (a lock file beside it); each process afterwards only loads
it. Without a compiler, or with STUDIO_CUSTOM_KERNELS=0, there is no library and networks use MindSpore's own
operators (the same mathematics, slower): a warning says why once per process.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from core.user_cache import user_cache_dir

__all__ = ["SOURCES", "HEADERS", "FLAGS", "SWITCH", "switched_off", "cache_dir", "cpu_model", "library_path",
           "library", "loaded", "build"]

SOURCES = tuple(sorted(Path(__file__).parent.glob("*.cc")))
HEADERS = tuple(sorted(Path(__file__).parent.glob("*.h")))  # included by SOURCES: part of the recipe too
FLAGS = ("-O3", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", "-std=c++17")
SWITCH = "STUDIO_CUSTOM_KERNELS"  # 0 / off / false: MindSpore's own operators everywhere
_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr


def switched_off() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "false", "no")


def cache_dir() -> Path:
    return user_cache_dir("kernels", "STUDIO_KERNEL_CACHE")


def cpu_model() -> str:
    """This CPU's model: -march=native builds for it, so a cache shared by machines with other CPUs keeps one library
    each (the graph cache keys by it too: core/training/graph_cache.py)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                return line
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _compiler() -> str | None:
    return shutil.which(os.environ.get("CXX", "g++"))


def build(compiler: str, target: Path) -> None:
    """Compile SOURCES into target, atomically: processes that start together never load a half-written file.
    Raises RuntimeError with the compiler's own message when it fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([compiler, *FLAGS, "-o", tmp, *map(str, SOURCES)], capture_output=True, text=True,
                              timeout=120, check=False)
        if done.returncode != 0:
            names = ", ".join(p.name for p in SOURCES)
            raise RuntimeError(f"{compiler} could not compile {names}:\n{done.stderr[-2000:]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def library_path(compiler: str) -> Path:
    """Where the library built from SOURCES and HEADERS by compiler with FLAGS for this CPU is kept: a change
    to any of them names another library."""
    recipe = [*(p.read_text() for p in (*SOURCES, *HEADERS)), compiler, *FLAGS, cpu_model()]
    key = hashlib.sha256("\n".join(recipe).encode()).hexdigest()
    return cache_dir() / f"studio-kernels-{key[:16]}.so"


@lru_cache(maxsize=1)
def library() -> Path | None:
    """The compiled library, built now if this source, compiler and CPU have none yet; None (with a warning
    that says why and what to do) when custom operators are switched off or cannot be built here."""
    if switched_off():
        return None
    compiler = _compiler()
    if compiler is None:
        _LOG.warning("no C++ compiler (%s) found: LeNet-5 trains with MindSpore's own operators, "
                     "slower; install g++ (Debian: apt-get install g++) for the project's faster ones",
                     os.environ.get("CXX", "g++"))
        return None
    target = library_path(compiler)
    if not target.exists():
        try:
            _build_once(compiler, target)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            _LOG.warning("the project's C++ operators could not be built in %s, so LeNet-5 trains with "
                         "MindSpore's own (slower); set %s=0 to silence this. %s", target.parent, SWITCH, e)
            return None
    return target


def loaded() -> Path | None:
    """The library if this process has asked for it already (LeNet-5's graphs call it), else None; never builds."""
    return library() if library.cache_info().currsize else None


def _build_once(compiler: str, target: Path) -> None:
    """Build target unless another process has, one process at a time: the ranks of a data-parallel run and
    the workers that start together on a new machine find the library missing at once, and each compiled it
    (~12 CPU-seconds of g++ each); the others wait for the first and load its library."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_suffix(".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when this process dies
        if target.exists():
            return
        try:
            build(compiler, target)
        except BaseException:
            lock_path.unlink(missing_ok=True)  # nothing of a failed build is left in the cache
            raise
