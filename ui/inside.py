"""Inside the network (not a page): activation maps, saliency and first-layer filters for one input,
drawn by the Draw and Evaluate pages."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core.app import model_service
from ui.language import t


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
    st.markdown(t("inside.intro", digit=r.predicted, p=r.probs[r.predicted]))
    a, b = st.columns([1, 3])
    a.image(saliency_overlay(image, r.saliency), width=168, caption=t("inside.saliency"))
    shown = [(name, out) for name, out in r.layers if "ReLU" in name or "MaxPool" in name]
    with b:
        for name, out in shown:
            if out.ndim == 3:  # conv feature maps: one image per channel
                st.caption(t("inside.maps", name=name, n=out.shape[0], h=out.shape[1], w=out.shape[2]))
                st.image([_unit(m) for m in out], width=56 if out.shape[1] >= 14 else 40)
            else:              # hidden units as a strip, the strongest first
                order = np.argsort(out)[::-1]
                st.caption(t("inside.units", name=name, n=out.size, active=int((out > 0).sum()),
                             strongest=", ".join(f"#{i} {out[i]:.2f}" for i in order[:5])))
                side = int(np.ceil(np.sqrt(out.size)))
                grid = np.zeros(side * side, np.float32)
                grid[:out.size] = _unit(out)
                st.image(grid.reshape(side, side), width=168, clamp=True)
    st.caption(t("inside.filters", n=r.filters.shape[0], h=r.filters.shape[1], w=r.filters.shape[2]))
    st.image([_unit(f) for f in r.filters], width=56)
