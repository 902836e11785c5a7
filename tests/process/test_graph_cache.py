"""A warm worker's first graphs from the graph cache (core.training.graph_cache): a process that loads them trains
bit for bit what the process that compiled them trained, and other graphs never load them."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from core import PROJECT_ROOT
from core.cli.warm_worker import COMPILED_AHEAD, READY
from core.runs.store import RunStore
from core.training.prepared import LOADED

# One fresh process: prepare the model with the cache (its first compilation), then train a run on it. A script
# file, as MindSpore's cache needs an entry script (`python -c` has none, and nothing is kept).
SCRIPT = """
import hashlib, json, sys
from core.runtime import prepare_process
network, data_dir, hidden = sys.argv[1], sys.argv[2], int(sys.argv[3])
prepare_process(network)
from core.config import TrainConfig
from core.data.folders import validate_mnist_dir
from core.training import graph_cache, prepared
from core.training.build import prepare_data
from core.training.events import EventLog, StepEvent
from core.training.loop import train
from core.training.weight_arrays import snapshot
config = TrainConfig(network=network, epochs=1, data_dir=data_dir, seed=3, **({"hidden": (hidden,)} if hidden else {}))
data = prepare_data(config, validate_mnist_dir(data_dir), None, seed=config.seed)
graph_cache.allow()  # as a warm worker does
how = prepared.prepare(config, data.steps_per_epoch)
events = EventLog()
result = train(config, validate_mnist_dir(data_dir), [events])
weights = snapshot(result.net)
digest = hashlib.sha256(b"".join(weights[k].tobytes() for k in sorted(weights))).hexdigest()
print(json.dumps({"how": how, "taken": network not in prepared._READY,
                  "losses": [s.loss for s in events.of(StepEvent)], "weights": digest}))
"""


def prepare_and_train(cache, network: str, data_dir, hidden: int = 0, **env) -> dict:
    """hidden: the MLP's one hidden layer's width (0: the network's default)."""
    script = cache.parent / "prepare_and_train.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), network, str(data_dir), str(hidden)], cwd=PROJECT_ROOT,
                          env=dict(os.environ, STUDIO_GRAPH_CACHE_DIR=str(cache), PYTHONPATH=str(PROJECT_ROOT), **env),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_graphs_loaded_from_the_cache_train_what_compiled_ones_train_and_other_graphs_compile_their_own(
        tmp_path, small_mnist):
    cache = tmp_path / "graphs"
    compiled = prepare_and_train(cache, "lenet5", small_mnist)  # LeNet-5: its graphs call the C++ operators
    assert compiled["how"] == "saved" and compiled["taken"], compiled
    folders = sorted(p.name for p in cache.iterdir())
    assert len(folders) == 1 and folders[0].startswith("graphs-"), folders

    loaded = prepare_and_train(cache, "lenet5", small_mnist)
    assert loaded["how"] == "loaded" and loaded["taken"], loaded
    assert loaded["losses"] == compiled["losses"] and len(loaded["losses"]) > 1
    assert loaded["weights"] == compiled["weights"]

    # Other graphs (the MLP, of another width) in the same cache: compiled and kept in a folder of their own
    other = prepare_and_train(cache, "mlp", small_mnist, hidden=32)
    assert other["how"] == "saved" and other["taken"], other
    assert len([p for p in cache.iterdir() if p.name.startswith("graphs-")]) == 2
    assert not list(cache.glob(".compiling-*")), "a private folder was left behind"

    off = prepare_and_train(cache, "lenet5", small_mnist, STUDIO_GRAPH_CACHE="0")
    assert off["how"] == "compiled" and off["losses"] == compiled["losses"] and off["weights"] == compiled["weights"]


def test_a_warm_worker_says_in_its_log_that_its_graphs_came_from_the_cache(tmp_path):
    cache, store, workdir = tmp_path / "graphs", tmp_path / "store", tmp_path / "workdir"
    workdir.mkdir()  # MindSpore's compile cache writes into the working directory unless it is given a folder
    said = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "core.cli.warm_worker", "mlp", "--store", str(store)],
                              cwd=workdir, env=dict(os.environ, STUDIO_GRAPH_CACHE_DIR=str(cache),
                                                    PYTHONPATH=str(PROJECT_ROOT)),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and READY in done.stdout, done.stdout + done.stderr[-2000:]
        said.append(next(line for line in done.stdout.splitlines() if COMPILED_AHEAD in line))
    assert said[0].endswith("its graphs kept in the graph cache)"), said
    assert said[1].endswith("its graphs loaded from the graph cache)"), said
    assert list(workdir.iterdir()) == [], "MindSpore wrote into the working directory"


def test_a_command_line_run_loads_the_graphs_the_one_before_it_kept_and_trains_the_same(tmp_path, small_mnist):
    """A fresh run's step graphs, compiled ahead in a training process (the command line here, the worker of a
    run started from a page alike), come from the cache the second time: the same losses step for step."""
    env = dict(os.environ, STUDIO_GRAPH_CACHE_DIR=str(tmp_path / "graphs"))
    runs = []
    for i in range(2):
        store = tmp_path / f"store{i}"
        done = subprocess.run([sys.executable, "-m", "core.cli.train", "--network", "mlp", "--hidden", "32",
                               "--epochs", "1", "--data-dir", str(small_mnist), "--store", str(store)],
                              cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        runs.append((done.stdout, RunStore(store)))
    assert LOADED not in runs[0][0] and LOADED in runs[1][0], runs[1][0][-2000:]
    losses = [[s.loss for s in store.steps(store.list_runs()[0].id)] for _, store in runs]
    assert len(losses[0]) > 1 and losses[0] == losses[1]

