"""The confusion matrix as a time-lapse: one Plotly figure with a frame per epoch (the validation split's
[true][predicted] counts that training recorded at each epoch's end), a slider through the epochs and a play
button. Played in the browser alone, so the same figure works on Train, on Evaluate and in the offline HTML
report."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.training.events import EpochMetrics

__all__ = ["Frame", "frames_of", "timelapse_figure", "FRAME_MS"]

FRAME_MS = 700  # an epoch a frame while playing: slow enough to see which cells empty
_DIGITS = [str(d) for d in range(10)]


@dataclass(frozen=True)
class Frame:
    epoch: int
    counts: np.ndarray   # (10, 10) [true, predicted]
    accuracy: float


def frames_of(epochs: Sequence[EpochMetrics]) -> list[Frame]:
    """One frame per epoch that recorded its confusion counts, in epoch order."""
    out = []
    for e in sorted(epochs, key=lambda e: e.epoch):
        if e.val_confusion is None:
            continue
        counts = np.asarray(e.val_confusion, np.int64)
        total = int(counts.sum())
        out.append(Frame(e.epoch, counts, float(np.trace(counts)) / total if total else float("nan")))
    return out


def _heatmap(frame: Frame, zmax: float) -> go.Heatmap:
    # colour by log counts (the diagonal would otherwise wash out every mistake); each cell says its count
    return go.Heatmap(z=np.log1p(frame.counts), text=frame.counts, texttemplate="%{text}", x=_DIGITS, y=_DIGITS,
                      colorscale="Blues", showscale=False, zmin=0, zmax=zmax, hoverinfo="skip")


def timelapse_figure(frames: Sequence[Frame], title: Callable[[Frame], str], axis_true: str, axis_predicted: str,
                     epoch_word: str, play: str, pause: str, height: int = 460) -> go.Figure:
    """The last epoch's matrix shown; the slider and ▶ play the others (titles say each epoch's accuracy)."""
    zmax = float(np.log1p(max(int(f.counts.max()) for f in frames)))
    last = frames[-1]
    fig = go.Figure(data=[_heatmap(last, zmax)],
                    frames=[go.Frame(data=[_heatmap(f, zmax)], name=str(f.epoch),
                                     layout=go.Layout(title_text=title(f))) for f in frames])
    step = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    fig.update_layout(
        title_text=title(last), height=height, margin=dict(l=10, r=10, t=48, b=10),
        # square cells, the axes' labels beside them, no grid lines across the page
        xaxis=dict(title=axis_predicted, type="category", tickvals=_DIGITS, ticktext=_DIGITS, constrain="domain",
                   showgrid=False, zeroline=False),
        yaxis=dict(title=axis_true, type="category", tickvals=_DIGITS, ticktext=_DIGITS, autorange="reversed",
                   scaleanchor="x", constrain="domain", showgrid=False, zeroline=False),
        sliders=[dict(active=len(frames) - 1, x=0.1, len=0.9, y=0, yanchor="top", pad=dict(t=36),
                      currentvalue=dict(prefix=f"{epoch_word} "),
                      steps=[dict(method="animate", label=str(f.epoch), args=[[str(f.epoch)], step]) for f in frames])],
        updatemenus=[dict(type="buttons", direction="left", x=0, y=0, xanchor="left", yanchor="top", pad=dict(t=36),
                          showactive=False, buttons=[
                              dict(label="▶ " + play, method="animate",
                                   args=[None, dict(frame=dict(duration=FRAME_MS, redraw=True), fromcurrent=False,
                                                    transition=dict(duration=0), mode="immediate")]),
                              dict(label="⏸ " + pause, method="animate",
                                   args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")])])])
    fig.update_layout(margin=dict(b=110))  # the slider and the buttons sit under the matrix
    return fig
