"""A warm worker's stdin (core/cli/warm_worker.Inbox): run ids to train, and the settings pages show, of which it
compiles only the latest, and only while no other line waits. Driven through a real pipe in a child process, with
the compilation replaced by a line that says what it would compile (no MindSpore here)."""
from __future__ import annotations

import json
import subprocess
import sys

from core import PROJECT_ROOT
from core.config import TrainConfig
from core.runs.launch.warm_pool import PREPARE

CHILD = """
import json, sys
import core.cli.warm_worker as w
w._prepare_model = lambda config: print("compile", json.dumps([config.batch_size, list(config.hidden)]), flush=True)
inbox = w.Inbox("mlp")
inbox.take_waiting()
print("wanted at the start", inbox.wanted.batch_size, flush=True)
while True:
    run = inbox.next_run(float(sys.argv[1]))
    print("run", json.dumps(run), flush=True)
    if not run:
        break
"""


def _lines(*configs: TrainConfig) -> list[str]:
    return [PREPARE + c.to_json() for c in configs]


def _child(stdin: str, timeout_s: float = 5.0) -> list[str]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(timeout_s)], input=stdin, capture_output=True,
                          text=True, timeout=60, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_settings_sent_before_the_start_are_taken_and_runs_stay_for_next_run():
    b8, b16, b32 = (TrainConfig(network="mlp", batch_size=b) for b in (8, 16, 32))
    out = _child("\n".join([*_lines(b32, b16), "run-1", *_lines(b32), "run-2", *_lines(b8), ""]))
    assert out[0] == "wanted at the start 16", "the latest of the settings already sent"
    assert out[1:] == ['run "run-1"', 'run "run-2"', 'compile [8, [512, 512]]', 'run ""'], \
        "no compilation while a run waits behind the settings; the last settings once nothing waits"


def test_only_the_latest_settings_of_its_network_are_compiled():
    sizes = [TrainConfig(network="mlp", batch_size=b) for b in (8, 16, 32)]
    other = TrainConfig(network="lenet5", batch_size=128)
    out = _child("\n".join(["run-0", *_lines(*sizes), *_lines(other), PREPARE + "{not a config", ""]))
    assert out[1:] == ['run "run-0"', 'compile [32, [512, 512]]', 'run ""'], "the latest of this network's settings, once"


def test_no_line_within_the_wait_is_no_run():
    out = _child("", timeout_s=0.2)
    assert out == ["wanted at the start 64", 'run ""']


def test_the_pool_sends_a_config_the_worker_reads_back():
    config = TrainConfig(network="mlp", hidden=(128, 32), batch_size=32, learning_rate=0.02)
    line = _lines(config)[0]
    assert "\n" not in line and TrainConfig.from_json(line[len(PREPARE):]) == config
    assert json.loads(line[len(PREPARE):])["hidden"] == [128, 32]
