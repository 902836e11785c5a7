"""A digit image as pen strokes: thin the ink to a one-pixel skeleton (Zhang and Suen's thinning), then trace the
skeleton into polylines, as a person would draw it. Used to draw official test digits through the real canvas
(bench/drawn_digits.py) and to make training digits look drawn (core/data/drawn_look.py)."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

__all__ = ["skeleton", "strokes", "Stroke", "extent", "placed", "pen_ink"]

Stroke = list[tuple[float, float]]  # (x, y) points, in the image's pixels

# The 8 neighbours in the order Zhang and Suen name them P2..P9: clockwise from the one above.
_RING = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))


def _neighbours(img: np.ndarray) -> list[np.ndarray]:
    padded = np.pad(img, 1)
    h, w = img.shape
    return [padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy, dx in _RING]


def skeleton(mask: np.ndarray) -> np.ndarray:
    """The one-pixel-wide skeleton of a boolean mask (Zhang & Suen 1984), as a boolean array."""
    img = mask.astype(np.uint8).copy()
    while True:
        changed = False
        for first in (True, False):
            p = _neighbours(img)
            count = sum(p)
            # 0 -> 1 transitions going round P2, P3, ..., P9, P2
            turns = sum(((p[i] == 0) & (p[(i + 1) % 8] == 1)).astype(np.uint8) for i in range(8))
            if first:
                a, b = p[0] * p[2] * p[4], p[2] * p[4] * p[6]
            else:
                a, b = p[0] * p[2] * p[6], p[0] * p[4] * p[6]
            drop = (img == 1) & (count >= 2) & (count <= 6) & (turns == 1) & (a == 0) & (b == 0)
            if drop.any():
                img[drop] = 0
                changed = True
        if not changed:
            return img.astype(bool)


def _adjacency(skel: np.ndarray) -> dict[tuple[int, int], list[tuple[int, int]]]:
    points = set(zip(*np.nonzero(skel), strict=True))
    return {(int(y), int(x)): [(int(y) + dy, int(x) + dx) for dy, dx in _RING if (y + dy, x + dx) in points]
            for y, x in points}


def _walk(start, graph, used) -> list[tuple[int, int]]:
    """Follow unused edges from start, going as straight as the skeleton allows."""
    path, here, heading = [start], start, (0, 0)  # no heading yet: any way out is as straight
    while True:
        options = [n for n in graph[here] if frozenset((here, n)) not in used]
        if not options:
            return path
        options.sort(key=lambda n: -((n[0] - here[0]) * heading[0] + (n[1] - here[1]) * heading[1]))
        nxt = options[0]
        used.add(frozenset((here, nxt)))
        heading = (nxt[0] - here[0], nxt[1] - here[1])
        path.append(nxt)
        here = nxt


def strokes(image: np.ndarray, threshold: int = 100, min_points: int = 3) -> list[Stroke]:
    """The pen strokes that draw a grey digit image (ink bright on dark): polylines through its skeleton, each
    starting at a free end where there is one, longest first. Tiny spurs (fewer than min_points) are left out
    unless nothing else is there."""
    skel = skeleton(np.asarray(image) > threshold)
    graph = _adjacency(skel)
    used: set[frozenset] = set()
    paths = []
    while True:
        left = [p for p, ns in graph.items() if any(frozenset((p, n)) not in used for n in ns)]
        if not left:
            break
        free = [p for p in left if sum(frozenset((p, n)) not in used for n in graph[p]) == 1]
        paths.append(_walk(min(free or left), graph, used))
    isolated = [[p] for p, ns in graph.items() if not ns]
    paths = sorted(paths, key=len, reverse=True)
    kept = [p for p in paths if len(p) >= min_points] or paths[:1] or isolated[:1]
    return [_smooth([(float(x), float(y)) for y, x in path]) for path in kept]


def _smooth(points: Stroke, rounds: int = 2) -> Stroke:
    """The pixel staircase of a traced skeleton rounded off as a hand's stroke is ([1, 2, 1] / 4, ends kept)."""
    if len(points) < 3:
        return points
    xy = np.asarray(points)
    for _ in range(rounds):
        xy[1:-1] = (xy[:-2] + 2 * xy[1:-1] + xy[2:]) / 4
    return [(float(x), float(y)) for x, y in xy]


def extent(lines: list[Stroke]) -> tuple[float, float, float, float]:
    """Where strokes lie: their left, top, width and height."""
    xs = [x for line in lines for x, _ in line]
    ys = [y for line in lines for _, y in line]
    return min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)


def placed(lines: list[Stroke], height: float, left: float, top: float) -> list[Stroke]:
    """The strokes scaled to be height tall (their shape kept), their top left corner moved to (left, top)."""
    x0, y0, _, h = extent(lines)
    scale = height / max(h, 1.0)
    return [[(left + (x - x0) * scale, top + (y - y0) * scale) for x, y in line] for line in lines]


def pen_ink(lines: list[Stroke], pen: float, size: int = 280) -> np.ndarray:
    """The strokes drawn with a round pen pen px wide on a size x size canvas, as Draw & predict's canvas draws
    them: uint8, ink 255 on 0."""
    canvas = Image.new("L", (size, size))
    draw = ImageDraw.Draw(canvas)
    r = pen / 2
    for line in lines:
        if len(line) > 1:
            draw.line(line, fill=255, width=max(1, round(pen)), joint="curve")
        for x, y in line[:1] + line[-1:]:  # the pen's round ends
            draw.ellipse([x - r, y - r, x + r, y + r], fill=255)
    return np.asarray(canvas)
