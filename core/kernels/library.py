"""The project's C++ operators, compiled on first use into a shared library in a cache outside the work tree.

MindSpore's ops.Custom(func_type="aot") runs a function of a shared library inside a Graph-mode or PyNative
network on CPU. The library is built once per source, compiler and CPU (g++ -O3 -march=native) into
$STUDIO_KERNEL_CACHE, else $XDG_CACHE_HOME/mindspore-studio/kernels, else ~/.cache/mindspore-studio/kernels;
each process afterwards only loads it. Without a compiler, or with STUDIO_CUSTOM_KERNELS=0, there is no library
and networks use MindSpore's own operators (the same mathematics, slower): a warning says why once per process.
"""
from __future__ import annotations

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

__all__ = ["SOURCES", "HEADERS", "FLAGS", "SWITCH", "switched_off", "cache_dir", "library_path", "library", "build"]

SOURCES = tuple(sorted(Path(__file__).parent.glob("*.cc")))
HEADERS = tuple(sorted(Path(__file__).parent.glob("*.h")))  # included by SOURCES: part of the recipe too
FLAGS = ("-O3", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", "-std=c++17")
SWITCH = "STUDIO_CUSTOM_KERNELS"  # 0 / off / false: MindSpore's own operators everywhere
_LOG = logging.getLogger(__name__)  # no handler configured: Python prints warnings to stderr


def switched_off() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "false", "no")


def cache_dir() -> Path:
    return user_cache_dir("kernels", "STUDIO_KERNEL_CACHE")


def _cpu_model() -> str:
    """-march=native builds for this CPU: a cache shared by machines with other CPUs keeps one library each."""
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
    recipe = [*(p.read_text() for p in (*SOURCES, *HEADERS)), compiler, *FLAGS, _cpu_model()]
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
            build(compiler, target)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            _LOG.warning("the project's C++ operators could not be built in %s, so LeNet-5 trains with "
                         "MindSpore's own (slower); set %s=0 to silence this. %s", target.parent, SWITCH, e)
            return None
    return target
