"""Turn a canvas drawing into an MNIST-like 28x28 image: crop to the ink, fit it in a 20x20 box keeping its
aspect ratio, and centre it by its centre of mass in 28x28 (how MNIST itself was made)."""
from __future__ import annotations

import numpy as np
from PIL import Image

from core.messages import Explained

# A click paints a disc as wide as the stroke (8 to 40 px on the 280 px canvas: 50 to 1,300 pixels), so a
# pixel count cannot tell a dot from a digit; its extent can: a digit spans more than this share of the canvas.
MIN_EXTENT = 0.15


class DrawingError(Explained, ValueError):
    """The drawing cannot be read as a digit; the message says what to do."""


def to_mnist(rgba: np.ndarray | None) -> np.ndarray:
    """Canvas RGBA (H, W, 4), white ink on black -> uint8 (28, 28). Raises DrawingError if there is no digit."""
    if rgba is None or rgba.ndim != 3:
        raise DrawingError("canvas_empty")
    rgb = rgba[:, :, :3].astype(np.float32)
    ink = rgb.max(axis=2) * (rgba[:, :, 3].astype(np.float32) / 255.0 if rgba.shape[2] == 4 else 1.0)
    mask = ink > 30
    if not mask.any():
        raise DrawingError("canvas_empty")
    rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
    if max(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1) < MIN_EXTENT * max(mask.shape):
        raise DrawingError("only_a_dot")
    crop = ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    h, w = crop.shape
    scale = 20.0 / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = np.asarray(Image.fromarray(np.clip(crop, 0, 255).astype(np.uint8)).resize((nw, nh), Image.Resampling.LANCZOS),
                       dtype=np.float32)
    out = np.zeros((28, 28), np.float32)
    top, left = (28 - nh) // 2, (28 - nw) // 2
    out[top:top + nh, left:left + nw] = small
    # shift so that the centre of mass sits at the centre
    total = out.sum()
    ys, xs = np.indices(out.shape)
    dy = int(round(13.5 - (ys * out).sum() / total))
    dx = int(round(13.5 - (xs * out).sum() / total))
    dy = int(np.clip(dy, -top, 28 - nh - top))
    dx = int(np.clip(dx, -left, 28 - nw - left))
    out = np.roll(out, (dy, dx), axis=(0, 1))
    return np.clip(out, 0, 255).astype(np.uint8)
