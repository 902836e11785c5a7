"""Weights over time: each layer's weight and gradient statistics per epoch, with health warnings and a
play-back of their histograms (recorded by the trainer, read from the run store)."""
import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.layer_stats import diagnose, histograms, over_time
from pages.common import SIDEBAR_POLL_S, ensure_frame, get_store, run_label

ensure_frame()
st.title("📈 Weights over time")
store = get_store()
runs = [r for r in store.list_runs() if r.source != "upload"]
if not runs:
    st.info("No runs yet: train one on **Train**. Every epoch records each layer's weights and gradients.")
    st.stop()
by_id = {r.id: r for r in runs}
default = st.session_state.get("run_id")
ids = list(by_id)
run_id = st.selectbox("Run", ids, index=ids.index(default) if default in ids else 0, key="weights_run",
                      format_func=lambda i: run_label(by_id[i]))
kind = st.radio("Show", ("weight", "grad"), horizontal=True, key="weights_kind",
                format_func={"weight": "weights", "grad": "gradients (each epoch's last batch)"}.get)


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
            centres = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
            out.append(go.Bar(x=centres, y=counts, width=[b - a for a, b in zip(edges, edges[1:])],
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
        updatemenus=[{"type": "buttons", "showactive": False, "direction": "left", "x": 0, "y": -0.02 * rows, "xanchor": "left",
                      "yanchor": "top", "buttons": [
                          {"label": "▶ Play", "method": "animate",
                           "args": [None, {"frame": {"duration": 700, "redraw": True}, "fromcurrent": True}]},
                          {"label": "⏸ Pause", "method": "animate",
                           "args": [[None], {"frame": {"duration": 0}, "mode": "immediate"}]}]}],
        sliders=[{"steps": step, "currentvalue": {"prefix": "epoch "}, "x": 0.15, "len": 0.85,
                  "y": -0.02 * rows, "yanchor": "top"}])
    return fig


def render(run_id: str) -> None:
    stats = store.layer_stats(run_id)
    if not stats:
        st.info("This run has no layer statistics yet: they are recorded at the end of every epoch "
                "(runs made before this feature have none).")
        return
    notes = diagnose(stats)
    for note in notes:
        st.warning(note)
    if not notes and any(s.kind == "grad" for s in stats):
        st.success("No dead or exploding layer: every gradient is finite and none vanished or blew up.")
    rows = pd.DataFrame(over_time(stats, kind))
    if rows.empty:
        st.caption("Gradients are recorded from epoch 1 on; this run has not finished an epoch yet.")
        return
    measure = "std" if kind == "weight" else "norm"
    long = rows.melt(id_vars=["epoch", "param"], value_vars=["mean", measure], var_name="statistic")
    fig = px.line(long, x="epoch", y="value", color="param", facet_col="statistic", markers=True)
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.update_xaxes(dtick=1)
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10))
    st.plotly_chart(fig, width="stretch", key="weights_curves")
    st.caption("Epoch 0 is the initialisation. A layer whose gradient norm falls to ~0 has stopped learning; one "
               "whose norm keeps growing is exploding.")
    frames = histograms(stats, kind)
    epochs = sorted({s.epoch for s in stats if s.kind == kind})
    st.subheader("Histograms, epoch by epoch")
    st.plotly_chart(playback(frames, epochs), width="stretch", key="weights_playback")
    with st.expander("Numbers"):
        st.dataframe(rows, hide_index=True, width="stretch")


live = by_id[run_id].active
st.fragment(run_every=SIDEBAR_POLL_S if live else None)(render)(run_id)
