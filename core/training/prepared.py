"""A model built and compiled before its run exists, so that Start does not wait for MindSpore's compiler.

A warm worker (core/cli/warm_worker.py) prepares its network's model with the default settings: it builds the
network, optimizer and train step and compiles the first call's graphs (K steps per call, and one step) without
running them, so the weights and the optimizer's state stay as built. The run that then arrives takes that model
when its graphs would be the same: same network and shape, style, mode, optimizer, loss, batch and steps per
call; a fresh run (not resumed, no initial checkpoint, one process, float32). Its own seeded initial weights are
copied in and its learning rate set: the run trains exactly as it would on a model built for it (the weights of
a freshly built network with the run's seed, the optimizer's moments at zero). Any other run builds its own.
A run on other data keeps the prepared K (chosen for the bundled data's epoch when steps_per_call is 0): K
changes how many steps share a call, not the weights, and compiling another would delay its first step.
"""
from __future__ import annotations

import dataclasses

import mindspore as ms
import numpy as np

from core.config import TrainConfig
from core.model.network_build import training_network
from core.runtime import set_mode, settle_heap
from core.training import graph_cache
from core.training.build import Model, build_model
from core.training.parallel import Parallel
from core.training.resume_state import ResumeState
from core.training.weight_arrays import restore, snapshot

__all__ = ["TAKEN", "LOADED", "prepare", "preparable", "model_for", "graph_settings", "prepared_settings", "discard"]

# Settings that change what a run trains on or for how long, not its graphs (the learning rate is a Parameter the
# step reads, set for the run; a schedule is not: it is a list of every step's rate inside the graph, so with a
# schedule the rate and the number of epochs shape the graphs too).
_OUTSIDE_THE_GRAPHS = ("epochs", "seed", "val_fraction", "early_stopping", "patience", "num_parallel_workers",
                       "data_dir", "validate_every", "augment", "drawn_look", "learning_rate")
_SCHEDULE_SETTINGS = ("epochs", "learning_rate")
TAKEN = "this run trains the model compiled before it (core.training.prepared)"
LOADED = "this run's first graphs were loaded from the graph cache (core.training.graph_cache)"
# network -> (graph settings, steps per epoch: a learning-rate schedule's graph holds every step's rate, model)
_READY: dict[str, tuple[TrainConfig, int, Model]] = {}


def graph_settings(config: TrainConfig) -> TrainConfig:
    """config with every setting that does not shape its graphs at the default (two runs with equal graph
    settings compile the same graphs)."""
    neutral = [f for f in _OUTSIDE_THE_GRAPHS if f not in _SCHEDULE_SETTINGS or config.lr_schedule == "constant"]
    defaults = TrainConfig()
    return dataclasses.replace(config, **{f: getattr(defaults, f) for f in neutral})


def preparable(config: TrainConfig) -> bool:
    """Whether a run of config could take a prepared model (model_for): Graph mode, the Cell style, one process,
    float32, no initial checkpoint."""
    return (config.mode == "graph" and config.style == "cell" and config.workers <= 1 and config.amp_level == "O0"
            and config.init_checkpoint is None)


def prepare(config: TrainConfig, steps_per_epoch: int) -> str:
    """Build config's model and compile its first call's graphs now, for the next run of the same graphs; from
    the graph cache where the process allows it (core.training.graph_cache). Returns how the graphs came:
    "loaded", "saved" or "compiled"."""
    if config.mode != "graph" or config.style != "cell":
        return "compiled"  # PyNative compiles nothing ahead; the functional style's step is not a Cell to compile
    set_mode(config.mode)
    settle_heap()  # the compilations below each run a garbage collection (core.runtime.settle_heap)
    model = build_model(config, None, None, steps_per_epoch, compiled_ahead=True)
    how = _compile_ahead(config, model, steps_per_epoch)
    _READY[config.network] = (graph_settings(config), steps_per_epoch, model)
    return how


def _compile_ahead(config: TrainConfig, model: Model, steps_per_epoch: int) -> str:
    """Compile model's step graphs (one step, and K) for config's batches without running them: the weights do
    not move. From the graph cache when it is available (core.training.graph_cache)."""
    images = ms.Tensor(np.zeros((config.batch_size, 1, 28, 28), np.float32))
    labels = ms.Tensor(np.zeros(config.batch_size, np.int32))
    return graph_cache.compile_once((repr(graph_settings(config)), str(steps_per_epoch), str(model.step.k)),
                                    lambda: model.step.compile(images, labels))


def prepared_settings(network: str) -> tuple[TrainConfig, int] | None:
    """The graph settings and steps per epoch of the network's prepared model (None: none waits)."""
    ready = _READY.get(network)
    return (ready[0], ready[1]) if ready is not None else None


def discard(network: str) -> None:
    """Let the network's prepared model go (another is to be prepared in its place)."""
    _READY.pop(network, None)


def model_for(config: TrainConfig, resume: ResumeState | None, parallel: Parallel | None,
              steps_per_epoch: int) -> Model:
    """The prepared model when it fits this run (and no other run has taken it), else a model built now.
    Callers seed the run first (core.training.build.seed_run): the initial weights are the seed's."""
    ready = _READY.get(config.network)
    fits = (ready is not None and resume is None and parallel is None and config.init_checkpoint is None
            and config.amp_level == "O0" and ready[0] == graph_settings(config)
            and (config.lr_schedule == "constant" or ready[1] == steps_per_epoch))  # a schedule spans the epochs
    if not fits or ready is None:
        model = build_model(config, resume, parallel, steps_per_epoch)
        if (resume is None and parallel is None and preparable(config) and graph_cache.available()
                and _compile_ahead(config, model, steps_per_epoch) == "loaded"):
            print(LOADED, flush=True)  # the run's log: its first step waits for no compilation
        return model
    del _READY[config.network]
    print(TAKEN, flush=True)  # the run's log: its first step waits for no compilation
    model = ready[2]
    restore(model.net, snapshot(training_network(config)))  # the run's seeded initial weights
    if config.lr_schedule == "constant":
        ms.ops.assign(model.optimizer.learning_rate, ms.Tensor(config.learning_rate, ms.float32))
    return model
