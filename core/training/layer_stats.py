"""Per-layer weight and gradient statistics, recorded every epoch, and what they say about a layer's health.

Plain NumPy: the trainer summarises its tensors here, the store keeps the summaries, the pages plot them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.i18n import text

HIST_BINS = 30
KINDS = ("weight", "grad")
# Health thresholds. A gradient this small for a whole epoch's last batch means the layer no longer learns;
# a gradient norm that grows this much from one epoch to the next is on its way to overflow.
DEAD_GRAD_NORM = 1e-7
EXPLODING_GROWTH = 10.0
EXPLODING_NORM = 1e3


@dataclass(frozen=True)
class LayerStat:
    epoch: int              # 0: the weights before training
    param: str              # the parameter's name, e.g. "features.0.weight"
    kind: str               # weight | grad
    mean: float
    std: float
    min: float
    max: float
    norm: float             # L2 norm
    zeros: float            # fraction of exact zeros
    hist_edges: tuple[float, ...]
    hist_counts: tuple[int, ...]

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def summarize(epoch: int, param: str, kind: str, values: np.ndarray, bins: int = HIST_BINS) -> LayerStat:
    """Statistics and a histogram of one tensor. Non-finite values are counted out of the histogram but
    make mean/std/norm non-finite, which is exactly what a diverging layer should show."""
    assert kind in KINDS, kind
    v = np.asarray(values, dtype=np.float64).ravel()
    finite = v[np.isfinite(v)]
    if finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        if lo == hi:  # a constant tensor (e.g. zero-initialised biases): one centred bin
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(finite, bins=bins, range=(lo, hi))
    else:
        counts, edges = np.zeros(bins, np.int64), np.linspace(-1.0, 1.0, bins + 1)
    return LayerStat(epoch, param, kind, float(v.mean()) if v.size else math.nan,
                     float(v.std()) if v.size else math.nan,
                     float(v.min()) if v.size else math.nan, float(v.max()) if v.size else math.nan,
                     float(np.sqrt(np.sum(v * v))), float(np.mean(v == 0)) if v.size else math.nan,
                     tuple(float(e) for e in edges), tuple(int(c) for c in counts))


def summarize_all(epoch: int, weights: dict[str, np.ndarray], grads: dict[str, np.ndarray] | None) -> list[LayerStat]:
    out = [summarize(epoch, name, "weight", w) for name, w in weights.items()]
    for name, g in (grads or {}).items():
        out.append(summarize(epoch, name, "grad", g))
    return out


@dataclass(frozen=True)
class HealthNote:
    """A layer that looks unwell. The words are the reader's: a page says it with the catalogue entry
    weights.health_<kind> ({param}, {epoch}, {norm}); english() is the command line's and the tests'."""
    kind: str    # not_finite | dead | exploding
    param: str
    epoch: int
    norm: float

    def english(self) -> str:
        return text("en", f"weights.health_{self.kind}", param=self.param, epoch=self.epoch, norm=self.norm)


def diagnose(stats: list[LayerStat]) -> list[HealthNote]:
    """Layers that look dead or exploding, from one run's recorded gradients."""
    by_param: dict[str, list[LayerStat]] = {}
    for s in sorted((s for s in stats if s.kind == "grad"), key=lambda s: s.epoch):
        by_param.setdefault(s.param, []).append(s)
    notes = []
    for param, series in by_param.items():
        last = series[-1]
        if not math.isfinite(last.norm):
            notes.append(HealthNote("not_finite", param, last.epoch, last.norm))
        elif last.norm < DEAD_GRAD_NORM:
            notes.append(HealthNote("dead", param, last.epoch, last.norm))
        elif last.norm > EXPLODING_NORM or any(
                b.norm > EXPLODING_GROWTH * a.norm > 0 for a, b in zip(series, series[1:], strict=False)):
            notes.append(HealthNote("exploding", param, last.epoch, last.norm))
    return notes


def over_time(stats: list[LayerStat], kind: str) -> list[dict]:
    """Rows {epoch, param, mean, std, norm, zeros} of one kind, for curves across epochs."""
    return [{"epoch": s.epoch, "param": s.param, "mean": s.mean, "std": s.std, "norm": s.norm, "zeros": s.zeros}
            for s in stats if s.kind == kind]


def histograms(stats: list[LayerStat], kind: str) -> dict[str, dict[int, LayerStat]]:
    """param -> epoch -> stat, parameters in network order: the frames of a play-back."""
    out: dict[str, dict[int, LayerStat]] = {}
    for s in stats:
        if s.kind == kind:
            out.setdefault(s.param, {})[s.epoch] = s
    return out
