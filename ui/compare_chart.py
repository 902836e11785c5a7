"""Compare's curves as Train draws them: per run one colour, the step loss raw (faint) and smoothed with the
viewer's smoothing, the epochs' and validations' loss on the same panel and the accuracy on a panel below it,
a log scale for the loss when asked; both panels share the x axis and one hover, which lists every run."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.app.comparison import SettingAxis
from ui.charts import EPOCH_AXIS, LEGEND_ON_TOP, RUN_COLOURS, accuracy_axis
from ui.curves import CurveOptions, smooth
from ui.language import t

__all__ = ["comparison_figure", "settings_figure"]

LOSS_ROW = {"step loss": 1, "train_loss": 1, "val_loss": 1, "train_acc": 2, "val_acc": 2}


def comparison_figure(data: pd.DataFrame, names: dict[str, str], axis: str, o: CurveOptions) -> go.Figure:
    """data: core.app.comparison.curves rows {run, x, metric, value}; names: run id -> name, in run order."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=(t("compare.loss_panel"), t("compare.accuracy_panel")))
    for i, (run_id, name) in enumerate(names.items()):
        colour = RUN_COLOURS[i % len(RUN_COLOURS)]
        mine = data[data.run == run_id]
        _step_loss(fig, mine[mine.metric == "step loss"], name, colour, o)
        for metric in ("train_loss", "val_loss", "train_acc", "val_acc"):
            points = mine[mine.metric == metric].sort_values("x")
            if not points.empty:
                dash = "solid" if metric.startswith("train") else "dot"
                fig.add_trace(go.Scatter(x=points.x, y=points.value, name=f"{name} · {t('train.' + metric)}",
                                         mode="lines+markers", legendgroup=run_id, showlegend=False,
                                         line=dict(color=colour, dash=dash)), LOSS_ROW[metric], 1)
        if mine[mine.metric == "step loss"].empty:  # the run's legend entry, when no step loss carries it
            fig.add_trace(go.Scatter(x=[None], y=[None], name=name, mode="lines", legendgroup=run_id,
                                     line=dict(color=colour)), 1, 1)
    _layout(fig, axis, o)
    return fig


def _step_loss(fig: go.Figure, steps: pd.DataFrame, name: str, colour: str, o: CurveOptions) -> None:
    if steps.empty:
        return
    steps = steps.sort_values("x")
    run_id = steps.run.iloc[0]
    if o.smoothing > 0:
        fig.add_trace(go.Scatter(x=steps.x, y=steps.value, name=f"{name} · {t('train.step_loss')}", mode="lines",
                                 opacity=0.3, line=dict(color=colour, width=1), legendgroup=run_id,
                                 showlegend=False), 1, 1)
    values = smooth(steps.value.tolist(), o.smoothing) if o.smoothing > 0 else steps.value
    fig.add_trace(go.Scatter(x=steps.x, y=values, name=name, mode="lines", line=dict(color=colour, width=2.5),
                             legendgroup=run_id), 1, 1)


def _layout(fig: go.Figure, axis: str, o: CurveOptions) -> None:
    fig.update_xaxes(title_text=t(f"compare.axis_{axis}"), row=2, col=1)
    if axis == "epoch":
        fig.update_xaxes(**EPOCH_AXIS)
    fig.update_yaxes(type="log" if o.log_y else "linear", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2, col=1)
    fig.update_layout(height=620, legend=LEGEND_ON_TOP, margin=dict(l=10, r=10, t=80, b=10),
                      hovermode="x unified", hoversubplots="axis", hoverlabel=dict(namelength=-1))


def settings_figure(axes: list[SettingAxis], accuracy: list[float], accuracy_label: str) -> go.Figure:
    """Parallel coordinates: one line per run through its settings (core.app.comparison.setting_axes) to its
    best validation accuracy, coloured by it; choices and a few values are named at their ticks."""
    dims = [dict(label=t(f"configure.f_{a.name}"), values=list(a.values), tickvals=list(a.tickvals),
                 ticktext=list(a.ticktext)) for a in axes]
    dimension, line = accuracy_axis(accuracy, accuracy_label)
    fig = go.Figure(go.Parcoords(line=line, dimensions=[*dims, dimension], labelfont=dict(size=14),
                                 tickfont=dict(size=12)))
    fig.update_layout(height=380, margin=dict(l=60, r=40, t=50, b=20))
    return fig

