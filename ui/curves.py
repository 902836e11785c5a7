"""A run's curves as people can read them: loss per step (raw kept faint, smoothed on top, a min–max band where
a long run is downsampled), loss and accuracy per epoch (per step when the run validates every N steps), the
learning-rate changes as markers; smoothing and a log scale chosen by the viewer; two charts per row at most
when presenting."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.app.smoothing import smooth
from core.runs.rows import StepRow
from core.runs.store.roles import RunReads
from core.training.events import EpochMetrics, SettingEvent, ValidationEvent
from ui.charts import EPOCH_AXIS, LEGEND_ON_TOP, quick_tick_labels
from ui.language import t
from ui.present import room_fonts

__all__ = ["CurveOptions", "History", "read_history", "smooth", "curves", "downsampling_note"]

LESSON_HEIGHT, LESSON_LEGEND_FONT = 270, 16  # px: the lesson's curves under its control bar at 853×480
CHART_POINTS = 1500  # step history is downsampled by the store so long runs keep pages small
RAW, SMOOTH, TRAIN, VAL, MARK = "rgba(120,160,255,0.35)", "#2f80ed", "#f2994a", "#27ae60", "#d62728"


@dataclass(frozen=True)
class CurveOptions:
    smoothing: float = 0.8   # as TensorBoard's slider: the weight of the previous smoothed value (0: off)
    log_y: bool = False      # loss axes on a log scale
    present: bool = False    # presentation mode: large text, loss and accuracy side by side
    compact: bool = False    # a phone: loss and accuracy side by side, in the usual type


@dataclass(frozen=True)
class History:
    """What the curves show of a run, read once."""
    steps: list[StepRow]
    epochs: list[EpochMetrics]
    validations: list[ValidationEvent]
    setting_changes: list[SettingEvent]
    steps_per_epoch: int | None


def read_history(store: RunReads, run_id: str, steps_per_epoch: int | None) -> History:
    return History(store.steps(run_id, max_points=CHART_POINTS), store.epochs(run_id), store.validations(run_id),
                   store.setting_changes(run_id), steps_per_epoch)


def downsampling_note(h: History) -> str | None:
    """Said under the chart when points stand for several steps each (None: every step is drawn)."""
    if not h.steps or h.steps[0].count <= 1:
        return None
    return t("train.downsampled", points=len(h.steps), steps=sum(s.count for s in h.steps), each=h.steps[0].count)


# An accuracy axis fits its points but never runs past 100 % or below 0 (one point at 80 % was drawn on an axis
# from 10 % to 150 %); a point at 100 % keeps room for its marker.
ACCURACY_RANGE = dict(autorangeoptions=dict(minallowed=0.0, maxallowed=1.02))


def curves(h: History, o: CurveOptions) -> go.Figure:
    """The Train page's curves: the lesson's two when presenting or on a phone, else the three panels."""
    return quick_tick_labels(_lesson_curves(h, o) if o.present or o.compact else _panels(h, o))


def _panels(h: History, o: CurveOptions) -> go.Figure:
    per_step = bool(h.validations)
    titles = (t("train.step_loss"), t("train.loss_by_step") if per_step else t("train.epoch_loss"),
              t("train.accuracy_by_step") if per_step else t("train.epoch_accuracy"))
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles)
    cells = ((1, 1), (1, 2), (1, 3))
    _step_loss(fig, h, o, *cells[0])
    if per_step:
        _by_step(fig, h, cells[1], cells[2])
    else:
        _by_epoch(fig, h, cells[1], cells[2])
    _setting_markers(fig, h, *cells[0])
    _layout(fig, o, cells, per_step)
    _until_first_step(fig, h)
    _until_first_accuracy(fig, h, 3)
    return fig


def _until_first_accuracy(fig: go.Figure, h: History, col: int) -> None:
    """The accuracy panel, empty until a validation or an epoch's end: a line that says so, not bare axes."""
    if not h.steps or h.validations or h.epochs:
        return
    left, right = fig.layout[f"xaxis{col}"].domain  # paper coordinates: an axis without data moved "x2 domain"
    lines = "<br>".join(textwrap.wrap(t("train.accuracy_waiting"), 24))  # Plotly wraps no annotation itself
    fig.add_annotation(text=lines, xref="paper", yref="paper", x=(left + right) / 2, y=0.5, showarrow=False)
    _bare_axes(fig, row=1, col=col)


def _bare_axes(fig: go.Figure, **cell) -> None:
    """Axes with nothing to show yet: no ticks, grid or zero line under the line that says what comes."""
    for update in (fig.update_xaxes, fig.update_yaxes):
        update(showticklabels=False, showgrid=False, zeroline=False, **cell)


def _until_first_step(fig: go.Figure, h: History) -> None:
    """Before the first step, a line that says what comes, not empty axes that run from -1 to 4."""
    if h.steps:
        return
    _bare_axes(fig)
    fig.add_annotation(text=t("train.curve_waiting"), xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)


def _lesson_curves(h: History, o: CurveOptions) -> go.Figure:
    """For a room or a phone: loss and accuracy side by side, by step, low enough to share the first screen with
    the lesson's control bar; every loss (each step's, smoothed, each epoch's, each validation's) on one axis."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12)  # axis titles, not subplot titles: lower
    _step_loss(fig, h, o, 1, 1)
    _by_step(fig, h, (1, 1), (1, 2))
    _setting_markers(fig, h, 1, 1)
    # the accuracy lines take the colours of their loss lines, and their legend entries: one legend row
    fig.for_each_trace(lambda tr: tr.update(showlegend=False, legendgroup=tr.legendgroup.replace("acc", "loss")),
                       selector=dict(xaxis="x2"))
    if o.present:
        room_fonts(fig)
    fig.update_layout(height=LESSON_HEIGHT, margin=dict(l=10, r=10, t=36, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0,
                                  font=dict(size=LESSON_LEGEND_FONT)))
    fig.update_yaxes(title_text=t("compare.loss_panel"), row=1, col=1)
    fig.update_yaxes(title_text=t("compare.accuracy_panel"), tickformat=".0%", row=1, col=2, **ACCURACY_RANGE)
    # what the x axes count, close under their ticks: the chart keeps its height, its plot gives the room
    fig.update_xaxes(title_text=t("train.step"), title_standoff=0, automargin=True)
    if o.log_y:
        fig.update_yaxes(type="log", row=1, col=1)
    _until_first_step(fig, h)
    _until_first_accuracy(fig, h, 2)
    return fig


def _step_loss(fig: go.Figure, h: History, o: CurveOptions, row: int, col: int) -> None:
    if not h.steps:
        return
    # numpy arrays, not lists: Plotly writes them as typed binary arrays, and every viewer's copy of the chart
    # is serialised on every live update (a 1,500-step chart: 12 ms as lists, 3 ms as arrays, per viewer)
    x = np.fromiter((s.step for s in h.steps), dtype=np.int32, count=len(h.steps))
    loss = _series([s.loss for s in h.steps])
    if h.steps[0].count > 1:  # each point is a bucket's mean: draw its min-max band
        fig.add_trace(go.Scatter(x=x, y=_series([s.loss_min for s in h.steps]), mode="lines", line=dict(width=0),
                                 showlegend=False, hoverinfo="skip"), row, col)
        fig.add_trace(go.Scatter(x=x, y=_series([s.loss_max for s in h.steps]), mode="lines", line=dict(width=0),
                                 fill="tonexty", fillcolor="rgba(120,160,255,0.18)", name=t("train.min_max"),
                                 hoverinfo="skip"), row, col)
    smoothed = o.smoothing > 0
    fig.add_trace(go.Scatter(x=x, y=loss, name=t("train.step_loss"), mode="lines",
                             line=dict(width=1, color=RAW if smoothed else SMOOTH)), row, col)
    if smoothed:
        fig.add_trace(go.Scatter(x=x, y=_series(smooth(loss, o.smoothing)), name=t("train.smoothed"), mode="lines",
                                 line=dict(width=2.5, color=SMOOTH)), row, col)
    if h.validations:
        fig.add_trace(go.Scatter(x=[v.step for v in h.validations], y=[v.val_loss for v in h.validations],
                                 name=t("train.val_loss"), mode="lines+markers", legendgroup="val_loss",
                                 showlegend=False, line=dict(color=VAL, dash="dot")), row, col)


def _series(values) -> np.ndarray:
    """Loss values as float32 (None: a gap): half the bytes of float64, and more precision than a chart shows."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float32)


def _by_epoch(fig: go.Figure, h: History, loss_cell, acc_cell) -> None:
    x = [e.epoch for e in h.epochs]
    for name, colour, cell in (("train_loss", TRAIN, loss_cell), ("val_loss", VAL, loss_cell),
                               ("train_acc", TRAIN, acc_cell), ("val_acc", VAL, acc_cell)):
        y = [getattr(e, name) for e in h.epochs]
        if any(v is not None for v in y):
            fig.add_trace(go.Scatter(x=x, y=y, name=t(f"train.{name}"), mode="lines+markers",
                                     line=dict(color=colour, dash="solid" if "train" in name else "dot")), *cell)


def _by_step(fig: go.Figure, h: History, loss_cell, acc_cell) -> None:
    """Validation every N steps, and the training figures of each finished epoch at the epoch's last step."""
    vx = [v.step for v in h.validations]
    ex = [e.epoch * (h.steps_per_epoch or 0) for e in h.epochs]
    for name, colour, cell, x, rows in (("train_loss", TRAIN, loss_cell, ex, h.epochs),
                                        ("val_loss", VAL, loss_cell, vx, h.validations),
                                        ("train_acc", TRAIN, acc_cell, ex, h.epochs),
                                        ("val_acc", VAL, acc_cell, vx, h.validations)):
        if rows and (h.steps_per_epoch or "val" in name):
            fig.add_trace(go.Scatter(x=x, y=[getattr(r, name) for r in rows], name=t(f"train.{name}"),
                                     mode="lines+markers", legendgroup=name,
                                     line=dict(color=colour, dash="solid" if "train" in name else "dot")), *cell)


def _setting_markers(fig: go.Figure, h: History, row: int, col: int) -> None:
    """A dashed line at each step where live settings changed, labelled with all of them ("lr 0.05 · momentum
    0.5": one label a step, as two drawn at one place overlap)."""
    by_step: dict[int, list[str]] = {}
    for change in h.setting_changes:
        by_step.setdefault(change.step, []).append(t(f"train.marker_{change.setting}", value=f"{change.value:g}"))
    for step, labels in by_step.items():
        fig.add_vline(x=step, line=dict(color=MARK, dash="dash", width=1.5), row=row, col=col,
                      annotation=dict(text=" · ".join(labels), font=dict(color=MARK)),
                      annotation_position="top right")  # left of an early line, it pulled the axis below 0


def _layout(fig: go.Figure, o: CurveOptions, cells, per_step: bool) -> None:
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=80, b=10), legend=LEGEND_ON_TOP)
    fig.update_annotations(yshift=6)  # the subplot titles, clear of the legend above them
    fig.update_layout(legend_y=1.18)
    fig.update_xaxes(title_text=t("train.step"), row=cells[0][0], col=cells[0][1])
    axis = dict(title_text=t("train.step")) if per_step else dict(title_text=t("train.epoch"), **EPOCH_AXIS)
    for row, col in cells[1:]:
        fig.update_xaxes(row=row, col=col, **axis)
    fig.update_yaxes(row=cells[2][0], col=cells[2][1], **ACCURACY_RANGE)
    if o.log_y:
        for row, col in cells[:2]:
            fig.update_yaxes(type="log", row=row, col=col)
