"""What every recorded benchmark result carries: when, on what, with which versions; and where it goes."""
from __future__ import annotations

import json
import os
import platform
import time
from importlib.metadata import version
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def stamp(*packages: str) -> dict:
    """Date, machine, Python and the versions of mindspore and the packages named."""
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            **{name: version(name) for name in ("mindspore", *packages)}}


def save(name: str, record: dict) -> Path:
    """Write bench/results/<name>.json and say where."""
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(record, indent=1))
    print(f"recorded in bench/results/{out.name}")
    return out
