"""The network as a picture and the MLP's shape with + and − (as TensorFlow Playground): layers added or
removed, units per layer halved or doubled, the diagram and the parameter count following every click."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core.config import DEFAULT_HIDDEN, MAX_HIDDEN_LAYERS, MAX_UNITS, TrainConfig
from core.networks import DiagramLayer, network_spec
from ui.language import t
from ui.present import for_room
from ui.session import set_config

__all__ = ["shape_buttons", "network_diagram"]

NEW_LAYER_UNITS = 64
DOTS_SHOWN = 8  # units drawn per layer; a larger layer shows its count under the dots


def _reshape(config: TrainConfig, hidden: tuple[int, ...]) -> None:
    set_config(config.with_(hidden=hidden))  # the exact-widths field follows (ConfigForm keys it by shape)


def shape_buttons(config: TrainConfig) -> None:
    """− / + for the number of hidden layers and for each layer's units (halved or doubled)."""
    hidden = config.hidden
    row = _shape_row()
    row[0].markdown(t("configure.hidden_layers", n=len(hidden)))
    row[1].button("−", key="layers_minus", disabled=not hidden, help=t("configure.remove_layer"),
                  on_click=_reshape, args=(config, hidden[:-1]))
    row[2].button("+", key="layers_plus", disabled=len(hidden) >= MAX_HIDDEN_LAYERS, help=t("configure.add_layer"),
                  on_click=_reshape, args=(config, hidden + ((hidden[-1] if hidden else NEW_LAYER_UNITS),)))
    for i, units in enumerate(hidden):
        row = _shape_row()
        row[0].markdown(t("configure.layer_units", i=i + 1, units=units))
        fewer = hidden[:i] + (max(units // 2, 1),) + hidden[i + 1:]
        more = hidden[:i] + (min(units * 2, MAX_UNITS),) + hidden[i + 1:]
        row[1].button("−", key=f"units_minus_{i}", disabled=units <= 1, help=t("configure.halve_units"),
                      on_click=_reshape, args=(config, fewer))
        row[2].button("+", key=f"units_plus_{i}", disabled=units >= MAX_UNITS, help=t("configure.double_units"),
                      on_click=_reshape, args=(config, more))
    if hidden != DEFAULT_HIDDEN:
        st.button(t("configure.default_shape", shape=",".join(map(str, DEFAULT_HIDDEN))), key="shape_default",
                  on_click=_reshape, args=(config, DEFAULT_HIDDEN))


def _shape_row() -> tuple:
    """A label and its − / + buttons in one row; the buttons as wide as their glyph at any zoom (in narrow
    columns a large font cut the glyph to an empty box)."""
    label, buttons = st.columns([3, 2], vertical_alignment="center")
    row = buttons.container(horizontal=True)
    return label, row, row


def _name(layer: DiagramLayer) -> str:
    if layer.kind == "hidden":
        return t("configure.d_hidden", i=layer.label)
    return layer.label if layer.kind == "layer" else t(f"configure.d_{layer.kind}")


def _layers(config: TrainConfig) -> list[tuple[str, int]]:
    return [(_name(layer), layer.units) for layer in network_spec(config.network).diagram(config)]


def network_diagram(config: TrainConfig) -> go.Figure:
    """Layers as columns of units (at most DOTS_SHOWN drawn each), every drawn unit joined to the next layer's."""
    layers = _layers(config)
    fig = go.Figure()
    ys = [[(j - (min(n, DOTS_SHOWN) - 1) / 2) for j in range(min(n, DOTS_SHOWN))] for _, n in layers]
    edge_x, edge_y = [], []
    for x, (a, b) in enumerate(zip(ys, ys[1:], strict=False)):
        for ya in a:
            for yb in b:
                edge_x += [x, x + 1, None]
                edge_y += [ya, yb, None]
    fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line=dict(width=0.6, color="rgba(128,128,128,0.35)"),
                             hoverinfo="skip", showlegend=False))
    for x, ((name, n), y) in enumerate(zip(layers, ys, strict=False)):
        fig.add_trace(go.Scatter(x=[x] * len(y), y=y, mode="markers", showlegend=False, hovertext=f"{name}: {n:,}",
                                 hoverinfo="text",
                                 marker=dict(size=16, color="#2f80ed" if 0 < x < len(layers) - 1 else "#f2994a")))
        fig.add_annotation(x=x, y=-DOTS_SHOWN / 2 - 0.4, text="<br>".join((name, f"{n:,}")), showarrow=False,
                           yanchor="top")
    fig.update_xaxes(visible=False, range=[-0.6, len(layers) - 0.4])
    fig.update_yaxes(visible=False, range=[-DOTS_SHOWN / 2 - 2.2, DOTS_SHOWN / 2 + 0.2])
    fig.update_layout(height=300, margin=dict(l=5, r=5, t=5, b=5))
    return for_room(fig, height=380)
