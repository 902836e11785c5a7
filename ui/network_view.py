"""The network as a picture and the MLP's shape with + and − (as TensorFlow Playground): layers added or
removed, units per layer halved or doubled, the diagram and the parameter count following every click."""
from __future__ import annotations

from html import escape

import streamlit as st

from core.config import DEFAULT_HIDDEN, MAX_HIDDEN_LAYERS, MAX_UNITS, TrainConfig
from core.networks import DiagramLayer, network_spec
from ui.language import t
from ui.present import CHART_FONT, presenting
from ui.session import set_config

__all__ = ["shape_buttons", "network_picture"]

NEW_LAYER_UNITS = 64
DOTS_SHOWN = 8  # units drawn per layer; a larger layer shows its count under the dots
HEIGHT, ROOM_HEIGHT = 300, 380  # px: on a screen, and presenting to a room
FONT = 12  # px of the layer names (CHART_FONT when presenting)
MARGIN = 5  # px above and below
WIDE_NAMES_UP_TO = 4  # layers whose names fit on one line each
LABEL_GAP = 14  # px between the lowest dots and the labels
DOT_RADIUS = 8  # px
HIDDEN_COLOR, END_COLOR = "#2f80ed", "#f2994a"  # hidden layers; the input and the output
EDGE_COLOR = "rgba(128,128,128,0.35)"


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


def network_picture(config: TrainConfig) -> str:
    """Layers as columns of units (at most DOTS_SHOWN drawn each), every drawn unit joined to the next layer's, as
    an SVG for st.markdown's HTML (st.html's sanitizer removes SVG). Not a Plotly chart: Configure then loads no
    Plotly: ~0.6 CPU-seconds less of the browser's per load of the page, ~1.3 on a browser's first
    (docs/performance.md, "Configure's network picture"). Columns sit at fractions of the width (SVG's
    percent lengths): the picture fills its column at any width, its dots round."""
    layers = _layers(config)
    height = ROOM_HEIGHT if presenting() else HEIGHT
    font = CHART_FONT if presenting() else FONT
    line_height = round(font * 1.25)
    # each column's label: its name (in two lines where columns are narrow: "block" over "8@28×28") and its size
    labels = [[*(name.split(" ", 1) if len(layers) > WIDE_NAMES_UP_TO else [name]), f"{n:,}"] for name, n in layers]
    dots_top = MARGIN + DOT_RADIUS
    dots_bottom = height - MARGIN - font - line_height * (max(map(len, labels)) - 1) - LABEL_GAP
    half_span = (DOTS_SHOWN - 1) / 2  # a full column's dots are at rows -half_span..half_span

    def x(i: float) -> str:  # columns spread over the width, half a column's margin at each side
        return f"{100 * (i + 0.6) / len(layers):.2f}%"

    def y(row: float) -> float:
        return round(dots_top + (half_span - row) / (2 * half_span) * (dots_bottom - dots_top), 1)

    rows = [[j - (min(n, DOTS_SHOWN) - 1) / 2 for j in range(min(n, DOTS_SHOWN))] for _, n in layers]
    edges = [f'<line x1="{x(i)}" y1="{y(a)}" x2="{x(i + 1)}" y2="{y(b)}"/>'
             for i, (left, right) in enumerate(zip(rows, rows[1:], strict=False)) for a in left for b in right]
    parts = [f'<g stroke="{EDGE_COLOR}" stroke-width="0.6">{"".join(edges)}</g>']
    for i, (column, lines) in enumerate(zip(rows, labels, strict=False)):
        color = HIDDEN_COLOR if 0 < i < len(layers) - 1 else END_COLOR
        parts += [f'<circle cx="{x(i)}" cy="{y(row)}" r="{DOT_RADIUS}" fill="{color}"/>' for row in column]
        # the spaces between the lines keep a name whole for find-in-page and screen readers
        tspans = " ".join(f'<tspan x="{x(i)}"{f" dy={line_height}" if k else ""}>{escape(text)}</tspan>'
                          for k, text in enumerate(lines))
        parts.append(f'<text y="{dots_bottom + LABEL_GAP + font}" text-anchor="middle" font-size="{font}" '
                     f'fill="currentColor">{tspans}</text>')
    label = ", ".join(f"{name} {n:,}" for name, n in layers)
    return (f'<div><svg class="network-picture" width="100%" height="{height}" role="img" aria-label="{escape(label)}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg></div>')
