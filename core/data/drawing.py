"""Turn a canvas drawing into an MNIST-like 28x28 image: crop to the ink, redraw it with MNIST's stroke width,
fit it in a 20x20 box keeping its aspect ratio, and centre it by its centre of mass in 28x28 (how MNIST itself was
made). The stroke is evened out because a pen of one width draws a small digit bold and a large one thin once
both are fitted into 20x20 (bench/drawn_digits.py measures what that costs the model)."""
from __future__ import annotations

import numpy as np
from PIL import Image
from scipy.ndimage import distance_transform_edt

from core.data.strokes import skeleton
from core.messages import Explained

# A click paints a disc as wide as the stroke (8 to 40 px on the 280 px canvas: 50 to 1,300 pixels), so a
# pixel count cannot tell a dot from a digit; its extent can: a digit spans more than this share of the canvas.
MIN_EXTENT = 0.15


# MNIST's own strokes, in its 28x28 images: ink (> half bright) per skeleton pixel, median over 2,000
# training digits: 2.6 px (10 % of them under 1.9, 10 % over 4.0).
MNIST_STROKE_PX = 2.6
_WORK = 4  # the stroke is redrawn at 4x the final size (80 px for the 20 px box), then resized down: smooth edges


class DrawingError(Explained, ValueError):
    """The drawing cannot be read as a digit; the message says what to do."""


def even_stroke(crop: np.ndarray) -> np.ndarray:
    """The digit in crop (ink 0-255, cropped to it) redrawn along its skeleton with a round pen as wide as
    MNIST's stroke will be once the digit fills 20x20; returned at about 80 px on its long side."""
    h, w = crop.shape
    size = 20 * _WORK
    work = np.asarray(Image.fromarray(np.clip(crop, 0, 255).astype(np.uint8)).resize(
        (max(1, round(w * size / max(h, w))), max(1, round(h * size / max(h, w)))), Image.Resampling.BILINEAR))
    ys, xs = np.nonzero(skeleton(work > 127))
    if len(ys) == 0:
        return work.astype(np.float32)
    r = MNIST_STROKE_PX * _WORK / 2
    pad = int(np.ceil(r)) + 1  # the pen reaches r beyond the skeleton's ends
    spine = np.pad(np.zeros(work.shape, bool), pad)
    spine[ys + pad, xs + pad] = True
    distance = distance_transform_edt(~spine)  # each pixel's distance to the nearest skeleton pixel
    return (np.clip(r + 0.5 - distance, 0.0, 1.0) * 255.0).astype(np.float32)  # a round pen, its edge 1 px soft


def readings(rgba: np.ndarray | None) -> np.ndarray:
    """The two ways the model reads a drawing, (2, 28, 28) uint8: the stroke evened out, then as drawn. Their
    probabilities averaged read drawn digits better than either alone (bench/drawn_digits.py)."""
    return np.stack([to_mnist(rgba), to_mnist(rgba, evened=False)])


def to_mnist(rgba: np.ndarray | None, evened: bool = True) -> np.ndarray:
    """Canvas RGBA (H, W, 4), white ink on black -> uint8 (28, 28). Raises DrawingError if there is no digit.
    evened: the stroke redrawn with MNIST's width (even_stroke); False keeps the pen's own."""
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
    if evened:
        crop = even_stroke(crop)
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
