"""Who may reach what: data folders a user names, and the shared-password gate's rules (run ids: core.runs.ids).

No Streamlit here: pages call these, and so can the command line and tests."""
from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from core import PROJECT_ROOT
from core.data.folders import resolve_path
from core.data.idx import DataError

PASSWORD_ENV = "STUDIO_PASSWORD"
DATA_ROOTS_ENV = "STUDIO_DATA_ROOTS"


def is_loopback(address: str | None) -> bool:
    """True when a server bound to this address is reachable from this machine only."""
    if address is None or address.strip() in ("", "0.0.0.0", "::"):
        return False  # Streamlit's default (no address) listens on every interface
    if address.strip() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip()).is_loopback
    except ValueError:
        return False  # a host name: assume other machines can reach it


def data_roots(exposed: bool, store_root: Path | None = None) -> list[Path] | None:
    """The folders under which users may name MNIST folders, or None for anywhere.

    $STUDIO_DATA_ROOTS (os.pathsep-separated) wins. Without it, a server on loopback (one person on their
    own machine) may read any folder; an exposed server only the bundled data and <run store>/datasets."""
    raw = os.environ.get(DATA_ROOTS_ENV, "").strip()
    if raw:
        return [Path(p).expanduser().resolve() for p in raw.split(os.pathsep) if p.strip()]
    if not exposed:
        return None
    roots = [PROJECT_ROOT / "data"]
    if store_root is not None:
        roots.append(Path(store_root) / "datasets")
    return roots


def check_data_path(path: str | os.PathLike, roots: list[Path] | None) -> Path:
    """The resolved folder, or DataError when it lies outside every allowed root (symlinks and '..'
    resolved first, so neither can escape)."""
    resolved = resolve_path(path)
    if roots is None:
        return resolved
    for root in roots:
        if resolved == root or root in resolved.parents:
            return resolved
    allowed = ", ".join(str(r) for r in roots)
    raise DataError("outside_roots", path=path, allowed=allowed, env=DATA_ROOTS_ENV)
