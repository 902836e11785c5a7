"""The error of a checkpoint that cannot be used, apart from core/model/checkpoint.py, which imports MindSpore: a
page that only says what is wrong with a checkpoint (Runs, the class round) does not load MindSpore for it."""
from __future__ import annotations

from core.messages import Explained

__all__ = ["CheckpointError"]


class CheckpointError(Explained, ValueError):
    """A checkpoint that cannot be used; the message says why and what to do."""
