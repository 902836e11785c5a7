"""Where the studio keeps what it makes once and reuses across runs, outside the work tree: $<override>, else
$XDG_CACHE_HOME/mindspore-studio/<name>, else ~/.cache/mindspore-studio/<name> (the C++ operators' library,
drawn-looking training digits). Tests point the overrides at temporary folders (tests/conftest.py)."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["user_cache_dir"]


def user_cache_dir(name: str, override: str) -> Path:
    if os.environ.get(override):
        return Path(os.environ[override])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mindspore-studio" / name
