"""Drawings the canvas can send: nothing, a dot, ink touching every border, a normal digit."""
import numpy as np
import pytest

from core.data.drawing import DrawingError, to_mnist


def canvas(mask: np.ndarray) -> np.ndarray:
    rgba = np.zeros((*mask.shape, 4), np.uint8)
    rgba[mask] = (255, 255, 255, 255)
    return rgba


def test_empty_canvas_and_none():
    for empty in (None, np.zeros((280, 280, 4), np.uint8)):
        with pytest.raises(DrawingError, match="canvas is empty"):
            to_mnist(empty)


@pytest.mark.parametrize("width", [3, 8, 22, 40])  # a click with the thinnest, default and widest stroke
def test_a_single_dot_is_not_a_digit(width):
    ys, xs = np.indices((280, 280))
    m = (ys - 140) ** 2 + (xs - 140) ** 2 <= (width / 2) ** 2
    assert m.sum() > 5
    with pytest.raises(DrawingError, match="only a dot"):
        to_mnist(canvas(m))


def test_a_short_thin_one_is_a_digit_not_a_dot():
    m = np.zeros((280, 280), bool)
    m[110:170, 138:146] = True  # a "1" 60 px tall, 8 px wide
    assert to_mnist(canvas(m)).max() > 0


def test_a_drawing_touching_every_border_is_fitted_inside():
    m = np.zeros((280, 280), bool)
    m[:, :20] = m[:, -20:] = m[:20, :] = m[-20:, :] = True  # a frame along all four edges
    out = to_mnist(canvas(m))
    assert out.shape == (28, 28) and out.dtype == np.uint8
    rows, cols = np.flatnonzero(out.max(1) > 0), np.flatnonzero(out.max(0) > 0)
    assert rows[0] >= 3 and rows[-1] <= 24 and cols[0] >= 3 and cols[-1] <= 24  # the 20x20 box, margins kept


def test_an_off_centre_stroke_is_centred_by_mass():
    m = np.zeros((280, 280), bool)
    m[10:120, 230:250] = True  # a short "1" in the top-right corner
    out = to_mnist(canvas(m)).astype(float)
    ys, xs = np.indices(out.shape)
    cy, cx = (ys * out).sum() / out.sum(), (xs * out).sum() / out.sum()
    assert abs(cy - 13.5) <= 1 and abs(cx - 13.5) <= 1
