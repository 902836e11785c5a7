"""Inside the network (not a page): activation maps, saliency and first-layer filters for one input,
drawn by the Draw and Evaluate pages."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core import model_service


def _unit(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float32)
    return (a - a.min()) / max(float(a.max() - a.min()), 1e-8)


def saliency_overlay(image: np.ndarray, saliency: np.ndarray) -> np.ndarray:
    """The digit in grey with the saliency in red on top, as an RGB float image."""
    grey, heat = _unit(image) * 0.6, _unit(saliency)
    return np.clip(np.stack([grey + heat, grey, grey], axis=-1), 0, 1)


def render_inside(checkpoint: str, image: np.ndarray, key: str) -> None:
    """The whole view for one uint8 (28, 28) image."""
    r = model_service.inspect(checkpoint, image)
    st.markdown(f"**Predicted {r.predicted}** ({r.probs[r.predicted]:.1%}). Saliency: how much each pixel "
                "moves the predicted class's score (the gradient of the score with respect to the input).")
    a, b = st.columns([1, 3])
    a.image(saliency_overlay(image, r.saliency), width=168, caption="saliency (red) on the input")
    shown = [(name, out) for name, out in r.layers if "ReLU" in name or "MaxPool" in name]
    with b:
        for name, out in shown:
            if out.ndim == 3:  # conv feature maps: one image per channel
                st.caption(f"{name}: {out.shape[0]} maps of {out.shape[1]}×{out.shape[2]}")
                st.image([_unit(m) for m in out], width=56 if out.shape[1] >= 14 else 40)
            else:              # hidden units as a strip, the strongest first
                order = np.argsort(out)[::-1]
                st.caption(f"{name}: {out.size} units, {int((out > 0).sum())} active; strongest: "
                           f"{', '.join(f'#{i} {out[i]:.2f}' for i in order[:5])}")
                side = int(np.ceil(np.sqrt(out.size)))
                grid = np.zeros(side * side, np.float32)
                grid[:out.size] = _unit(out)
                st.image(grid.reshape(side, side), width=168, clamp=True)
    st.caption(f"First-layer filters ({r.filters.shape[0]} shown, {r.filters.shape[1]}×{r.filters.shape[2]})")
    st.image([_unit(f) for f in r.filters], width=56)
