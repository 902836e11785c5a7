"""Weights over time: each layer's weight and gradient statistics per epoch, with health warnings and a
play-back of their histograms (recorded by the trainer, read from the run store)."""
import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.training.layer_stats import diagnose, histograms, over_time
from ui.format import run_choices
from ui.language import t
from ui.live import SIDEBAR_POLL_S
from ui.session import get_store
from ui.present import for_room

st.title("📈 " + t("weights.title"))
store = get_store()
runs = [r for r in store.list_runs() if r.source != "upload"]
if not runs:
    st.info(t("weights.no_runs"))
    st.stop()
by_id = {r.id: r for r in runs}
default = st.session_state.get("run_id")
ids = list(by_id)
run_id = st.selectbox(t("train.run"), ids, index=ids.index(default) if default in ids else 0, key="weights_run",
                      format_func=run_choices(runs).__getitem__)
kind = st.radio(t("weights.show"), ("weight", "grad"), horizontal=True, key="weights_kind",
                format_func=lambda k: t(f"weights.kind_{k}"))


def playback(frames: dict[str, dict], epochs: list[int]) -> go.Figure:
    """One histogram per parameter, animated over epochs with plotly's own play button and slider (the
    browser plays it; no reruns)."""
    params = list(frames)
    cols = 2 if len(params) <= 6 else 4
    rows = math.ceil(len(params) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=params, vertical_spacing=0.5 / max(rows, 1) / 2)

    def bars(epoch):
        out = []
        for p in params:
            s = frames[p].get(epoch)
            edges, counts = (s.hist_edges, s.hist_counts) if s else ((0.0, 1.0), (0,))
            centres = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
            out.append(go.Bar(x=centres, y=counts, width=[b - a for a, b in zip(edges, edges[1:], strict=False)],
                              marker_color="#4c78a8", showlegend=False))
        return out

    for i, trace in enumerate(bars(epochs[0])):
        fig.add_trace(trace, row=i // cols + 1, col=i % cols + 1)
    for i, p in enumerate(params):  # fixed axes per layer, so that growth and shrinkage are visible
        lo = min(s.hist_edges[0] for s in frames[p].values())
        hi = max(s.hist_edges[-1] for s in frames[p].values())
        top = max(max(s.hist_counts) for s in frames[p].values())
        fig.update_xaxes(range=[lo, hi], row=i // cols + 1, col=i % cols + 1)
        fig.update_yaxes(range=[0, top * 1.05], row=i // cols + 1, col=i % cols + 1)
    fig.frames = [go.Frame(data=bars(e), name=str(e)) for e in epochs]
    step = [{"args": [[str(e)], {"frame": {"duration": 0, "redraw": True}, "mode": "immediate"}],
             "label": str(e), "method": "animate"} for e in epochs]
    fig.update_layout(
        height=230 * rows + 120, margin=dict(l=10, r=10, t=40, b=10), bargap=0,
        updatemenus=[{"type": "buttons", "showactive": False, "direction": "left", "x": 0, "y": -0.02 * rows,
                      "xanchor": "left", "yanchor": "top", "buttons": [
                          {"label": "▶ " + t("weights.play"), "method": "animate",
                           "args": [None, {"frame": {"duration": 700, "redraw": True}, "fromcurrent": True}]},
                          {"label": "⏸ " + t("train.pause"), "method": "animate",
                           "args": [[None], {"frame": {"duration": 0}, "mode": "immediate"}]}]}],
        sliders=[{"steps": step, "currentvalue": {"prefix": t("train.epoch") + " "}, "x": 0.15, "len": 0.85,
                  "y": -0.02 * rows, "yanchor": "top"}])
    return fig


def render(run_id: str) -> None:
    stats = store.layer_stats(run_id)
    if not stats:
        st.info(t("weights.none_yet"))
        return
    notes = diagnose(stats)
    for note in notes:
        st.warning(t(f"weights.health_{note.kind}", param=note.param, epoch=note.epoch, norm=note.norm))
    if not notes and any(s.kind == "grad" for s in stats):
        st.success(t("weights.healthy"))
    rows = pd.DataFrame(over_time(stats, kind))
    if rows.empty:
        st.caption(t("weights.no_grads_yet"))
        return
    measure = "std" if kind == "weight" else "norm"
    long = rows.melt(id_vars=["epoch", "param"], value_vars=["mean", measure], var_name="statistic")
    long["statistic"] = long["statistic"].map(lambda k: t(f"weights.stat_{k}"))
    fig = px.line(long, x="epoch", y="value", color="param", facet_col="statistic", markers=True,
                  labels={"epoch": t("train.epoch"), "value": "", "param": t("weights.param"), "statistic": ""})
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.update_xaxes(dtick=1)
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10))
    st.plotly_chart(for_room(fig), width="stretch", key="weights_curves")
    st.caption(t("weights.curves_caption"))
    frames = histograms(stats, kind)
    epochs = sorted({s.epoch for s in stats if s.kind == kind})
    st.subheader(t("weights.histograms"))
    st.plotly_chart(for_room(playback(frames, epochs)), width="stretch", key="weights_playback")
    with st.expander(t("weights.numbers")):
        st.dataframe(rows.rename(columns=lambda c: t(f"weights.stat_{c}") if c not in ("epoch", "param")
                                 else t("train.epoch") if c == "epoch" else t("weights.param")),
                     hide_index=True, width="stretch")


live = by_id[run_id].active
st.fragment(run_every=SIDEBAR_POLL_S if live else None)(render)(run_id)
