"""Compare: two or more runs side by side: curves on a common axis, settings with the differences
highlighted, final metrics, hyper-parameters against validation accuracy, and re-run any of them."""
import pandas as pd
import plotly.express as px
import streamlit as st

from core import launcher
from core.compare import AXES, config_differences, curves, summary
from core.config import NETWORKS, OPTIMIZERS, STYLES, MODES
from core.store import RunBusy
from pages.common import ensure_frame, get_store, run_label

ensure_frame()
st.title("⚖️ Compare runs")
store = get_store()
runs = [r for r in store.list_runs() if r.source != "upload"]
if len(runs) < 2:
    st.info("Compare needs two runs with metrics: train another one on **Train** (or re-run one below).")
    st.stop()
by_id = {r.id: r for r in runs}
chosen = st.multiselect("Runs", list(by_id), default=[r.id for r in runs[:2]], key="compare_runs",
                        format_func=lambda i: run_label(by_id[i]))
if len(chosen) < 2:
    st.info("Choose at least two runs.")
    st.stop()
selected = [by_id[i] for i in chosen]
names = {r.id: r.name for r in selected}

# --- curves ------------------------------------------------------------------------------------------------
axis = st.radio("Common axis", AXES, horizontal=True, key="compare_axis",
                format_func={"step": "by step", "epoch": "by epoch", "elapsed": "by wall time (s)"}.get)
data = pd.DataFrame(curves(store, chosen, axis))
if data.empty:
    st.caption("These runs have no metrics on this axis yet.")
else:
    data["run"] = data["run"].map(names)
    fig = px.line(data, x="x", y="value", color="run", facet_col="metric", facet_col_wrap=3, markers=axis != "step")
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.update_layout(height=360 if data["metric"].nunique() <= 3 else 620, margin=dict(l=10, r=10, t=30, b=10))
    st.plotly_chart(fig, width="stretch", key="compare_curves")

# --- settings and results ------------------------------------------------------------------------------------
differ = config_differences([r.config for r in selected])
table = pd.DataFrame({r.name: {**r.config.to_dict(), **summary(r)} for r in selected})
st.caption(f"Settings that differ are highlighted: {', '.join(sorted(differ)) or 'none'}.")
st.dataframe(table.astype(str).style.apply(
    lambda row: ["background-color: rgba(242, 153, 74, 0.35)" if row.name in differ else "" for _ in row], axis=1),
    width="stretch")

# --- hyper-parameters vs validation accuracy -------------------------------------------------------------------
scored = [r for r in runs if r.best_val_acc is not None]
if len(scored) >= 2:
    st.subheader("Hyper-parameters vs best validation accuracy (all runs)")
    codes = {"network": NETWORKS, "style": STYLES, "mode": MODES, "optimizer": OPTIMIZERS}
    pc = pd.DataFrame([{**{k: codes[k].index(getattr(r.config, k)) for k in codes},
                        "learning_rate": r.config.learning_rate, "batch_size": r.config.batch_size,
                        "epochs": r.config.epochs, "best val acc": r.best_val_acc} for r in scored])
    fig = px.parallel_coordinates(pc, color="best val acc", color_continuous_scale="Viridis")
    fig.update_layout(height=380, margin=dict(l=40, r=40, t=40, b=10))
    st.plotly_chart(fig, width="stretch", key="parallel")
    st.caption("Coded axes: " + "; ".join(f"{k}: " + ", ".join(f"{i}={v}" for i, v in enumerate(vals))
                                          for k, vals in codes.items()))

# --- re-run ------------------------------------------------------------------------------------------------
st.subheader("Re-run")
again = st.selectbox("Run to repeat with exactly its settings (same seed)", chosen, key="rerun_which",
                     format_func=lambda i: run_label(by_id[i]))
busy = store.active_run()
if st.button("🔁 Re-run", key="rerun", disabled=busy is not None,
             help="One run trains at a time." if busy else None):
    try:
        run_id = launcher.start(store, by_id[again].config, name=f"re-run of {by_id[again].name}"[:80])
        st.session_state["run_id"] = run_id
        st.switch_page("pages/train.py")
    except RunBusy as e:
        st.error(str(e))
    except (ValueError, OSError) as e:
        st.error(f"Could not start: {e}")
