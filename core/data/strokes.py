"""A digit image as pen strokes: scale the ink up, thin it to a one-pixel skeleton (Zhang and Suen's thinning),
prune the skeleton's spurs, then trace it into polylines, as a person would draw it. Used to draw official test
digits through the real canvas (bench/drawn_digits.py) and to make training digits look drawn
(core/data/drawn_look.py)."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

__all__ = ["skeleton", "strokes", "Stroke", "extent", "fitting", "placed", "laid_out", "pen_ink"]

Stroke = list[tuple[float, float]]  # (x, y) points, in the image's pixels

UPSAMPLE = 4   # a digit is thinned at 4x its size (_upsampled)
SPUR_PX = 2.0  # skeleton branches up to this long (in the image's pixels) from a junction are thinning's, not strokes
EVERY = 2      # a stroke keeps every 2nd point of its fine path: one every half pixel of the image

# The 8 neighbours in the order Zhang and Suen name them P2..P9: clockwise from the one above.
_RING = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))


def _neighbours(img: np.ndarray) -> list[np.ndarray]:
    padded = np.pad(img, 1)
    h, w = img.shape
    return [padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy, dx in _RING]


def _turns(ring: list[np.ndarray]) -> np.ndarray:
    """Per pixel, its 0 -> 1 transitions going round its neighbours P2, P3, ..., P9, P2 (_neighbours' order)."""
    return sum(((ring[i] == 0) & (ring[(i + 1) % 8] == 1)).astype(np.uint8) for i in range(8))


def skeleton(mask: np.ndarray) -> np.ndarray:
    """The one-pixel-wide skeleton of a boolean mask (Zhang & Suen 1984), as a boolean array."""
    img = mask.astype(np.uint8).copy()
    while True:
        changed = False
        for first in (True, False):
            p = _neighbours(img)
            count, turns = sum(p), _turns(p)
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


def _upsampled(image: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
    """The ink's box (and a pixel of dark around it) scaled UPSAMPLE times, bilinearly, and where the box's top
    left pixel is in the image (y, x). At 28x28 a 9's loop often has a hole of two or three pixels under the ink
    threshold and thinning fills it with branches; scaled up first, the hole stays open and the skeleton runs
    along the stroke's middle instead of a pixel staircase."""
    padded = np.pad(np.asarray(image, np.uint8), 2)
    ys, xs = np.nonzero(padded)
    if not len(ys):
        return np.zeros((UPSAMPLE, UPSAMPLE), np.uint8), (0, 0)
    y0, y1, x0, x1 = ys.min() - 1, ys.max() + 2, xs.min() - 1, xs.max() + 2
    box = Image.fromarray(padded[y0:y1, x0:x1])
    fine = box.resize(((x1 - x0) * UPSAMPLE, (y1 - y0) * UPSAMPLE), Image.Resampling.BILINEAR)
    return np.asarray(fine), (int(y0) - 2, int(x0) - 2)


def _pruned(skel: np.ndarray, length: int) -> np.ndarray:
    """The skeleton without its spurs: branches of at most `length` pixels from a free end to a junction (a pixel
    where three or more branches meet), which thinning leaves at a thick stroke's corners and bumps and which a
    hand does not draw."""
    skel = skel.copy()
    ring = _neighbours(skel.astype(np.uint8))
    count = sum(ring)
    junction = skel & (_turns(ring) >= 3)
    h, w = skel.shape
    for end in zip(*np.nonzero(skel & (count == 1)), strict=True):
        branch, came_from, reached = [end], None, False
        while len(branch) <= length:
            y, x = branch[-1]
            ahead = [(y + dy, x + dx) for dy, dx in _RING if 0 <= y + dy < h and 0 <= x + dx < w
                     and skel[y + dy, x + dx] and (y + dy, x + dx) != came_from and (y + dy, x + dx) not in branch]
            if any(junction[n] for n in ahead):
                reached = True
                break
            if len(ahead) != 1:
                break
            came_from = branch[-1]
            branch.append(ahead[0])
        if reached and len(branch) <= length:
            for pixel in branch:
                skel[pixel] = False
    return skel


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


def _paths(graph: dict[tuple[int, int], list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Every edge of the skeleton in some path: each path starts at a free end where there is one (the top-left
    first), else anywhere that has an edge left."""
    left = {p: len(ns) for p, ns in graph.items()}  # each pixel's edges not yet walked
    used: set[frozenset] = set()
    paths: list[list[tuple[int, int]]] = []
    while True:
        open_ = [p for p, n in left.items() if n]
        if not open_:
            return paths
        path = _walk(min([p for p in open_ if left[p] == 1] or open_), graph, used)
        for a, b in zip(path, path[1:], strict=False):
            left[a] -= 1
            left[b] -= 1
        paths.append(path)


def strokes(image: np.ndarray, threshold: int = 100, min_length: float = 3.0) -> list[Stroke]:
    """The pen strokes that draw a grey digit image (ink bright on dark), in the image's pixels: polylines through
    its skeleton (thinned at UPSAMPLE times the size, spurs of up to SPUR_PX pruned), each starting at a free end
    where there is one, longest first. Paths shorter than min_length pixels are left out unless nothing else is
    there."""
    fine, (top, left) = _upsampled(image)
    graph = _adjacency(_pruned(skeleton(fine > threshold), round(SPUR_PX * UPSAMPLE)))
    paths = sorted(_paths(graph), key=len, reverse=True)
    isolated = [[p] for p, ns in graph.items() if not ns]
    kept = [p for p in paths if len(p) >= min_length * UPSAMPLE] or paths[:1] or isolated[:1]
    at = lambda v, origin: origin + (v + 0.5) / UPSAMPLE - 0.5  # noqa: E731  a fine pixel's centre, in the image
    lines = [_smooth([(at(x, left), at(y, top)) for y, x in path], rounds=2 * UPSAMPLE) for path in kept]
    return [line[::EVERY] + line[-1:] if (len(line) - 1) % EVERY else line[::EVERY] for line in lines]


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


def fitting(lines: list[Stroke], height: float, room: float) -> float:
    """The height to draw the strokes at: `height`, or less where the digit would then be wider than `room` px (a
    7 with a long bar is wider than tall, and a stroke that starts off the canvas is never drawn)."""
    _, _, w, h = extent(lines)
    return min(height, room * max(h, 1.0) / w) if w > 0 else height


def placed(lines: list[Stroke], height: float, left: float, top: float) -> list[Stroke]:
    """The strokes scaled to be height tall (their shape kept), their top left corner moved to (left, top)."""
    x0, y0, _, h = extent(lines)
    scale = height / max(h, 1.0)
    return [[(left + (x - x0) * scale, top + (y - y0) * scale) for x, y in line] for line in lines]


def laid_out(lines: list[Stroke], height: float, edge: float, where: tuple[float, float],
             size: int = 280) -> list[Stroke]:
    """The strokes on a size x size canvas: height tall (less where they would not fit across the room left
    inside edge px on every side), their box at where in that room, (0, 0) top left to (1, 1) bottom right."""
    room = size - 2 * edge
    height = fitting(lines, height, room)
    _, _, w, h = extent(lines)
    width = w * height / max(h, 1.0)
    return placed(lines, height, edge + where[0] * max(0.0, room - width), edge + where[1] * max(0.0, room - height))


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
