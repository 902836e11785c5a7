"""The class's drawings as HTML: a mosaic by digit for the projector (each drawing with the model's reading,
green when right, red when wrong) and a strip of one student's own drawings for their phone. One HTML block with
the 28×28 images as inline PNGs: a few kilobytes for a class, with no widget per drawing."""
from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image

from core.runs.people.class_round import ClassDrawing, DigitCount, Reading

__all__ = ["png_uri", "mosaic_html", "strip_html"]

RIGHT, WRONG = "#27ae60", "#e74c3c"
MAX_TILES = 48  # a digit's row shows its newest drawings up to this; the rest are counted in its title
_TILE = ("display:inline-block;margin:3px;text-align:center;font-size:0.75rem;line-height:1.1;"
         "vertical-align:top")


def png_uri(image: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(image, np.uint8), "L").save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _tile(image: np.ndarray, caption: str, right: bool | None, size: int, title: str = "") -> str:
    border = "#7f8c8d" if right is None else RIGHT if right else WRONG
    return (f'<div style="{_TILE}" title="{html.escape(title)}"><img src="{png_uri(image)}" width="{size}" '
            f'height="{size}" style="border:3px solid {border};border-radius:4px;image-rendering:pixelated"/>'
            f'<br/>{html.escape(caption)}</div>')


def mosaic_html(drawings: Sequence[ClassDrawing], counted: Sequence[DigitCount],
                row_title: Callable[[DigitCount], str], caption: Callable[[ClassDrawing], str],
                size: int = 56, names: bool = True) -> str:
    """One row a digit, newest drawing first: the row's title (its counts) and each drawing with its caption (the
    newest MAX_TILES of a digit: the projector's page stays small however long the lesson); a tile names its
    student on hover unless names=False (a file that leaves the studio)."""
    rows = []
    for count in counted:
        newest = [d for d in reversed(drawings) if d.label == count.digit][:MAX_TILES]
        tiles = "".join(_tile(d.image, caption(d), d.read_right, size, title=d.student if names else "")
                        for d in newest)
        rows.append(f'<div data-digit="{count.digit}" style="margin:0.2rem 0 0.5rem 0">'
                    f'<div style="font-weight:600">{html.escape(row_title(count))}</div>{tiles}</div>')
    return '<div class="class-mosaic">' + "".join(rows) + "</div>"


def strip_html(readings: Sequence[Reading], caption: Callable[[Reading], str], size: int = 64) -> str:
    """A student's own drawings, newest first, each with how the model read it (before and after a fine-tune)."""
    tiles = "".join(_tile(r.drawing.image, caption(r), (r.after if r.after is not None else r.before)
                          == r.drawing.label, size) for r in reversed(readings))
    return f'<div class="class-mine">{tiles}</div>'
