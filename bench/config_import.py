"""Import time of the config: core/config.py against pydantic with one small frozen model (a benchmark that prints
figures, not a test). pydantic is not a dependency; install it beside the project to measure it:

    .venv/bin/pip install --target /tmp/pyd pydantic
    PYTHONPATH=/tmp/pyd .venv/bin/python -m bench.config_import [--reps 3]

Each round is a fresh interpreter, the two imports interleaved in it. Results: bench/results/config_import.json.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

from bench.record import save, stamp

ROUND = """
import json, time
t0 = time.perf_counter()
import core.config
t1 = time.perf_counter()
from pydantic import BaseModel, ConfigDict, Field
class Config(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True)
    learning_rate: float = Field(0.01, gt=0, le=10)
    batch_size: int = Field(64, ge=1, le=4096)
Config()
t2 = time.perf_counter()
print(json.dumps({"core_config_ms": 1000 * (t1 - t0), "pydantic_ms": 1000 * (t2 - t1)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    reps = parser.parse_args().reps
    rounds = [json.loads(subprocess.run([sys.executable, "-c", ROUND], check=True, capture_output=True,
                                        text=True).stdout) for _ in range(reps)]
    for r in rounds:
        print(f"core/config.py {r['core_config_ms']:.0f} ms · pydantic + one model {r['pydantic_ms']:.0f} ms")
    save("config_import", {**stamp("pydantic"), "rounds": rounds})


if __name__ == "__main__":
    main()
