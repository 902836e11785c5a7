"""Evaluate's confusion matrix that answers a click: the cell's images, each with "Draw one like this".

Plotly heatmaps report no points to st.plotly_chart(on_select=...) when clicked (checked in Chromium), so an
all but invisible square marker sits on every cell's centre and takes the click."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.app.confusion_timelapse import frames_of, timelapse_figure
from core.model.metrics import Report
from core.training.events import EpochMetrics
from ui.charts import DIGITS, digit_axis
from ui.language import t
from ui.present import chart_config, for_room

__all__ = ["DrawTarget", "confusion_matrix", "chosen_cell", "forget_cell", "cell_gallery", "confusion_timelapse",
           "DRAW_TARGET"]

DRAW_TARGET = "draw_target"  # session key: the digit the Draw page asks for
CELL = "eval_cell"  # session key: the (true, predicted) cell whose images the gallery shows
_CLICKS = "_cell_clicks"  # session key: how many clicks on the matrix chose a cell
_CLICKED = "_cell_clicked"  # session key: the cell the chart reported selected at the last run
GALLERY_COLUMNS = 8


@dataclass(frozen=True)
class DrawTarget:
    """A digit to draw, and the image that prompted it (shown beside the canvas)."""
    digit: int
    image: np.ndarray | None = None
    read_as: int | None = None       # what the network read that image as
    sample_id: int | None = None


def _figure(r: Report) -> go.Figure:
    fig = go.Figure(go.Heatmap(z=np.log1p(r.confusion), text=r.confusion, texttemplate="%{text}", x=DIGITS, y=DIGITS,
                               colorscale="Blues", showscale=False, hoverinfo="skip"))
    rows, cols = np.indices(r.confusion.shape)
    fig.add_trace(go.Scatter(x=[DIGITS[c] for c in cols.ravel()], y=[DIGITS[t_] for t_ in rows.ravel()],
                             mode="markers", marker=dict(symbol="square", size=36, opacity=0.01, color="#000"),
                             text=r.confusion.ravel(), hovertemplate=t("evaluate.hover") + "<extra></extra>",
                             showlegend=False))
    # Ranges fixed to the cells: the markers would otherwise pad the axes and draw grid lines round the matrix.
    fig.update_layout(height=460, clickmode="event+select",
                      xaxis=dict(digit_axis(t("evaluate.predicted")), range=[-0.5, 9.5], showgrid=False,
                                 zeroline=False),
                      yaxis=dict(digit_axis(t("evaluate.true")), range=[9.5, -0.5], scaleanchor="x", constrain="domain",
                                 showgrid=False, zeroline=False),
                      margin=dict(l=10, r=10, t=36, b=10))  # scaleanchor: square cells; y from 0 at the top;
    # the top margin holds the chart's toolbar, which otherwise covers the top row's cells
    return fig


def confusion_matrix(r: Report, container, key: str = "confusion") -> None:
    """Draw the matrix; a click on a cell chooses it (CELL in the session) for the gallery."""
    event = container.plotly_chart(for_room(_figure(r)), width="stretch", key=key, on_select="rerun",
                                   selection_mode="points")
    points = event.selection.points if event and event.selection else []
    clicked = (int(points[0]["y"]), int(points[0]["x"])) if points else None
    if clicked is not None and clicked != st.session_state.get(_CLICKED):
        st.session_state[CELL] = clicked
        st.session_state[_CLICKS] = st.session_state.get(_CLICKS, 0) + 1
    st.session_state[_CLICKED] = clicked  # a click applies once; the selectboxes may change the cell after


def chosen_cell(columns, default: tuple[int, int]) -> tuple[int, int]:
    """The cell the gallery shows, in two selectboxes (true, predicted) a person may change: the last one
    clicked on the matrix or chosen here, else default.

    The selectboxes are new widgets after each click (their keys count the clicks). A click's rerun can be
    cut short by the chart's next event, and the browser then sends back the selectboxes' old values: under
    the same keys they would overwrite the clicked cell."""
    cell = st.session_state.setdefault(CELL, default)
    clicks = st.session_state.get(_CLICKS, 0)
    true = columns[0].selectbox(t("evaluate.true_digit"), range(10), index=cell[0], key=f"cell_true_{clicks}")
    pred = columns[1].selectbox(t("evaluate.predicted_digit"), range(10), index=cell[1], key=f"cell_pred_{clicks}")
    st.session_state[CELL] = (true, pred)
    return true, pred


def forget_cell() -> None:
    """Another model or data: the gallery starts again from its own worst mistake."""
    st.session_state.pop(CELL, None)


def cell_gallery(images: np.ndarray, r: Report, positions, caption, key: str) -> None:
    """The images at positions of the report, each captioned and with a button to draw one like it."""
    if len(positions) == 0:
        st.caption(t("evaluate.no_images"))
        return
    for start in range(0, len(positions), GALLERY_COLUMNS):
        cols = st.columns(GALLERY_COLUMNS)
        for col, p in zip(cols, positions[start:start + GALLERY_COLUMNS], strict=False):
            image = images[r.sample_ids[p]]
            col.image(image, width=84, caption=caption(p))
            if col.button("✏️", key=f"{key}_draw_{r.sample_ids[p]}", help=t("evaluate.draw_like", digit=r.labels[p])):
                st.session_state[DRAW_TARGET] = DrawTarget(int(r.labels[p]), image, int(r.predicted[p]),
                                                           int(r.sample_ids[p]))
                st.switch_page("app_pages/draw.py")


def confusion_timelapse(epochs: list[EpochMetrics], key: str) -> bool:
    """The validation split's confusion matrix epoch by epoch, with a slider and ▶ (played in the browser);
    False when the run recorded fewer than two (nothing to play)."""
    frames = frames_of(epochs)
    if len(frames) < 2:
        return False
    fig = timelapse_figure(frames, lambda f: t("timelapse.title", epoch=f.epoch, acc=f.accuracy),
                           t("evaluate.true"), t("evaluate.predicted"), t("timelapse.epoch"), t("timelapse.play"),
                           t("timelapse.pause"))
    st.plotly_chart(for_room(fig), width="stretch", key=key, config=chart_config())
    return True
