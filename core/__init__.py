"""MindSpore Training Studio's library (no Streamlit here), grouped by concern:

  data/      MNIST folders, IDX files, the MindSpore pipeline, the download, canvas drawings
  model/     networks, losses, optimizers, checkpoints, evaluation, export, looking inside a network
  training/  the training loop (run -> epoch -> step), its typed events and callbacks, pause/stop control
  runs/      the run store, recording a run into it, worker processes, data-parallel runs through msrun
  app/       what the dashboard's process needs besides: the locked MindSpore service, comparing runs,
             access rules
  cli/       the command lines: python -m core.cli.train | sweep | evaluate | control | download, and the
             worker processes the studio starts (worker, warm_worker)

Packages depend downwards only: app -> runs -> training -> model -> data -> (config, runtime, i18n).
"""
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
