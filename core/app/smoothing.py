"""TensorBoard's smoothing of a curve, shared by the pages (ui/curves.py) and the HTML report (no Streamlit)."""
from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["smooth"]


def smooth(values: Iterable[float | None], weight: float) -> list[float]:
    """An exponential moving average, debiased so the first points are not pulled towards zero; NaN points are
    skipped (kept as NaN)."""
    out, last, n = [], 0.0, 0
    for v in values:
        if v is None or not math.isfinite(v):
            out.append(float("nan"))
            continue
        last, n = last * weight + (1 - weight) * v, n + 1
        out.append(last / (1 - weight ** n) if weight < 1 else v)
    return out
