"""What a run trains with, made before its first step: this process's data (its share when data-parallel) and
the model (network, train step in the configured style, evaluator, optimizer), from fresh, resumed or initial
weights. Callers run core.runtime.prepare_process first."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import numpy as np

from core.config import TrainConfig
from core.data.drawn_look import drawn_look_folder
from core.data.folders import MnistFolder, load_labels, stratified_split
from core.data.memory_batches import MemoryBatches
from core.data.pipeline import create_dataset
from core.model import checkpoint
from core.model.evaluation import NetWithLoss
from core.model.losses import build_loss
from core.model.network_build import training_network
from core.model.optim import build_optimizer
from core.runtime import set_mode, settle_heap
from core.training.run_control import CollectiveControl, Control, NoControl
from core.training.parallel import Parallel
from core.training.resume_state import ResumeState
from core.training.steps import Stepper, make_train_step
from core.training.weight_arrays import restore, snapshot

__all__ = ["TrainData", "Model", "seed_run", "control_for", "prepare_data", "even_batch", "build_model",
           "initial_weights"]


@dataclass(frozen=True)
class TrainData:
    train: Any                       # the batched MindSpore dataset of this process's training images
    validation: Any | None           # the validation images (None: val_fraction 0)
    steps_per_epoch: int
    train_images: int                # over all workers
    validation_images: int
    workers: int
    batch: int                       # samples per step on this process


@dataclass(frozen=True)
class Model:
    net: nn.Cell
    step: Stepper
    eval_net: NetWithLoss
    optimizer: nn.Optimizer


def seed_run(config: TrainConfig, done_epochs: int) -> None:
    """Before a run's data and model are made: its mode and seeds, and the process's heap settled (the graphs it
    compiles next each run a garbage collection: core.runtime.settle_heap)."""
    settle_heap()
    set_mode(config.mode)
    ms.set_seed(config.seed)
    ds.config.set_seed(config.seed + done_epochs)  # a resumed run does not replay epoch 1's order


def control_for(control: Control | None, parallel: Parallel | None) -> Control:
    control = control or NoControl()
    return CollectiveControl(parallel, control) if parallel is not None else control


def prepare_data(config: TrainConfig, folder: MnistFolder, parallel: Parallel | None, seed: int) -> TrainData:
    """The training and validation datasets of this process (its share of them when data-parallel); seed: the
    training order's (the run's seed plus the epochs done, like the pipeline's)."""
    train_idx, val_idx = stratified_split(load_labels(folder, "train"), config.val_fraction)
    workers, batch = (parallel.size, config.worker_batch) if parallel else (1, config.batch_size)
    if parallel is not None:  # an equal, class-balanced share per worker: every worker takes as many steps
        share = len(train_idx) // workers
        train_idx = np.asarray(train_idx)[parallel.rank::workers][:share]
    if batch > len(train_idx):
        raise ValueError(f"batch size {config.batch_size} is larger than the {len(train_idx) * workers} training "
                         "images: lower the batch size")
    # validation reads the digits as MNIST wrote them; training, with drawn_look, half of them redrawn
    train_folder = drawn_look_folder(folder) if config.drawn_look else folder
    if config.augment:  # a random affine per image: MindSpore's pipeline
        train_ds = create_dataset(train_folder, "train", train_idx, batch, shuffle=True,
                                  num_parallel_workers=config.num_parallel_workers, augment=True)
    else:  # decoded once, batched from memory: the pipeline's threads no longer take CPU from the step
        train_ds = MemoryBatches(train_folder, "train", train_idx, batch, seed=seed)
    val_batch = even_batch(len(val_idx), max(config.batch_size, 256))
    val_ds = (create_dataset(folder, "train", val_idx, val_batch, shuffle=False,
                             num_parallel_workers=config.num_parallel_workers) if len(val_idx) else None)
    return TrainData(train_ds, val_ds, train_ds.get_dataset_size(), len(train_idx) * workers, len(val_idx),
                     workers, batch)


def even_batch(samples: int, largest: int) -> int:
    """The batch size that splits samples into the fewest batches of at most largest, as even as they can be. In
    Graph mode each batch shape is a graph compiled: 500 validation images in batches of 250, not 256 and 244,
    are one graph, not two (the bundled data's 10 % validation split)."""
    batches = -(-samples // largest)
    return -(-samples // batches) if samples else largest


def build_model(config: TrainConfig, resume: ResumeState | None, parallel: Parallel | None,
                steps_per_epoch: int = 1, compiled_ahead: bool = False) -> Model:
    """The network (with a resumed run's weights), its train step in the configured style, and its evaluator;
    compiled_ahead: its graphs are compiled before a run takes it (core.training.prepared)."""
    net = training_network(config)
    if config.amp_level != "O0":
        net = ms.amp.auto_mixed_precision(net, config.amp_level)  # casts in place; names stay the same
    if resume is not None:
        restore(net, resume.weights)
    elif config.init_checkpoint:
        restore(net, initial_weights(config))
    loss_fn = build_loss(config.loss)
    optimizer = build_optimizer(config, net.trainable_params(), steps_per_epoch)
    step = make_train_step(config, net, loss_fn, optimizer, parallel, steps_per_epoch, compiled_ahead)
    return Model(net, step, NetWithLoss(net, loss_fn), optimizer)


def initial_weights(config: TrainConfig) -> dict[str, np.ndarray]:
    """The weights of config.init_checkpoint (CheckpointError when it cannot be loaded, ValueError when it holds
    another network)."""
    if config.init_checkpoint is None:
        raise ValueError("initial_weights needs a config with an init_checkpoint")
    loaded = checkpoint.load(config.init_checkpoint)
    if (loaded.config.network, loaded.config.hidden) != (config.network, config.hidden):
        raise ValueError(f"{config.init_checkpoint} holds a {loaded.config.shape_label}, not the "
                         f"{config.shape_label} this run trains: start from a checkpoint of the same network")
    return snapshot(loaded.net)
