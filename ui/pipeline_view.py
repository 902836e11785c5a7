"""The Data page's pipeline preview: each step's image on one grey scale, so that what a step changes shows."""
from __future__ import annotations

import numpy as np

__all__ = ["on_common_scale"]


def on_common_scale(steps: list[tuple[str, np.ndarray]]) -> tuple[list[np.ndarray], tuple[float, float]]:
    """Each step's (28, 28) image mapped to 0-1 for display. The raw uint8 image keeps its own 0-255 scale;
    the float steps share one scale (from their lowest to their highest value), so that Rescale (0 to 1) and
    Normalize (about -0.42 to 2.82) look as different as they are. Returns the images and the shared range."""
    views = [x[0] if x.shape[0] == 1 else x[:, :, 0] for _, x in steps]
    floats = [v for v in views if v.dtype.kind == "f"]
    lo = min((float(v.min()) for v in floats), default=0.0)
    hi = max((float(v.max()) for v in floats), default=1.0)
    out = []
    for v in views:
        a, b = (lo, hi) if v.dtype.kind == "f" else (0.0, 255.0)
        out.append(np.clip((v.astype(np.float32) - a) / max(b - a, 1e-6), 0.0, 1.0))
    return out, (lo, hi)
