"""How each benchmark case runs: in a fresh process (the oneDNN settings are fixed when mindspore is imported),
with the environment of a preset (what a user gets, MindSpore's own defaults, the plain script with the
project's settings). Shared by bench/suite.py and the benchmarks it runs as parts."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PY = sys.executable


def env_for(preset: dict[str, str | None]) -> dict[str, str]:
    """The environment for a case: ours with the preset applied (None removes a variable)."""
    env = {k: v for k, v in os.environ.items() if k not in ("ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS",
                                                              "STUDIO_CHOSE_ONEDNN_ISA")}
    env.update(GLOG_v="3", PYTHONPATH=str(ROOT))
    for k, v in preset.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_case(script: str, args: list[str], preset: dict, timeout: float = 900) -> dict:
    p = subprocess.run([PY, str(ROOT / "bench" / script), *args], cwd=ROOT, env=env_for(preset),
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{script} {' '.join(args)} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


PRESETS = {
    # what a user gets without knowing anything: the project picks its settings itself
    "project": {},
    # MindSpore 2.10 as installed, no environment set
    "mindspore-default": {"ONEDNN_MAX_CPU_ISA": ""},
}


def reference_preset(network: str) -> dict:
    """The plain script with the project's process settings (so that only the training loop differs)."""
    from core.networks import network_spec  # deferred: core only when a plain-script case is built
    return {"ONEDNN_MAX_CPU_ISA": network_spec(network).onednn_isa or ""}
