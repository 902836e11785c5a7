"""Compare: two or more runs side by side: curves on a common axis, settings with the differences
highlighted, final metrics, hyper-parameters against validation accuracy, and re-run any of them."""
import pandas as pd
import streamlit as st

from core.app.comparison import AXES, curves, setting_axes, setting_differences, stated, summary
from core.app.table_files import formula_safe
from core.config import TrainConfig
from core.runs.store import RunGone
from ui.compare_chart import comparison_figure, settings_figure
from ui.curves import CurveOptions
from ui.format import readable, run_choices
from ui.identity import actions, owner_label
from ui.language import say, status_word, t
from ui.session import get_store
from ui.text import plot_text
from ui.present import for_room, presenting
from ui.records_view import may_take_out, record_take_out, records_download

st.title("⚖️ " + t("compare.title"))
store = get_store()
runs = [r for r in store.list_runs() if r.source != "upload"]
if len(runs) < 2:
    st.info(t("compare.need_two"))
    st.stop()
by_id = {r.id: r for r in runs}
labels = run_choices(runs)
chosen = st.multiselect(t("compare.runs"), list(by_id), default=[r.id for r in runs[:2]], key="compare_runs",
                        format_func=labels.__getitem__)
if len(chosen) < 2:
    st.info(t("compare.choose_two"))
    st.stop()
selected = [by_id[i] for i in chosen]
names = {r.id: plot_text(r.name) for r in selected}

# --- curves ------------------------------------------------------------------------------------------------
axis = st.radio(t("compare.axis"), AXES, horizontal=True, key="compare_axis",
                format_func=lambda a: t(f"compare.axis_{a}"))
data = pd.DataFrame(curves(store, chosen, axis))
if data.empty:
    st.caption(t("compare.no_metrics"))
else:
    left, right, _ = st.columns([3, 2, 1])
    options = CurveOptions(left.slider(t("train.smoothing"), 0.0, 0.99, 0.8, 0.01, key="compare_smoothing",
                                       help=t("train.smoothing_help")),
                           right.toggle(t("train.log_scale"), key="compare_log_y"), presenting())
    st.plotly_chart(for_room(comparison_figure(data, names, axis, options)), width="stretch", key="compare_curves")
    st.caption(t("compare.line_styles"))
    if may_take_out(selected):
        curves_csv = formula_safe(data.assign(run=data.run.map(names))).to_csv(index=False)
        st.download_button("⬇️ " + t("compare.curves_csv"), curves_csv, file_name="compared-curves.csv",
                           mime="text/csv", key="compare_csv", on_click=record_take_out, args=(selected, "curves csv"))

# --- settings and results ------------------------------------------------------------------------------------
said = {r.id: stated(r) for r in selected}  # a script or a summary states only some settings
differ = setting_differences(list(said.values()))
def summary_rows(run) -> dict:
    rows = summary(run)
    rows["status"] = status_word(rows["status"])
    if rows["best val acc"] is not None:
        rows["best val acc"] = f"{rows['best val acc']:.2%}"
    return {**{t("compare.s_" + k.replace(" ", "_")): v for k, v in rows.items()},
            t("runs.col_owner"): owner_label(run)}


def setting_name(field: str) -> str:
    return t(f"configure.f_{field}")


# the results first (they are what one compares), then the settings that differ, then the rest
ordered = sorted(TrainConfig().to_dict(), key=lambda k: k not in differ)
table = pd.DataFrame({r.name: {**summary_rows(r), **{setting_name(k): said[r.id].get(k) for k in ordered}}
                      for r in selected}).map(readable)
differ_names = {setting_name(k) for k in differ}
st.caption(t("compare.differ", names=", ".join(sorted(differ_names)) or t("compare.none")))
st.dataframe(table.astype(str).style.apply(
    lambda row: ["background-color: rgba(242, 153, 74, 0.35)" if row.name in differ_names else "" for _ in row],
    axis=1), width="stretch")

with st.expander(t("records.header")):
    records_download(store, selected, key="records_compare")

# --- hyper-parameters vs validation accuracy -------------------------------------------------------------------
scored = [r for r in runs if r.best_val_acc is not None]
if len(scored) >= 2:
    st.subheader(t("compare.parallel"))
    # Drawn when asked: Plotly's parallel coordinates render with WebGL, 1.2-1.3 s of the browser's main thread
    # in Chromium without a GPU (bench/page_times.py), which was most of the time this page took to open.
    if st.toggle(t("compare.show_parallel"), key="compare_parallel", help=t("compare.show_parallel_help")):
        accuracy = [a for a in (r.best_val_acc for r in scored) if a is not None]  # each of them has one
        fig = settings_figure(setting_axes(scored, t("compare.not_stated")), accuracy, t("compare.s_best_val_acc"))
        st.plotly_chart(for_room(fig), width="stretch", key="parallel")
        if any(r.external for r in scored):
            st.caption(t("compare.not_stated_means"))

# --- re-run ------------------------------------------------------------------------------------------------
st.subheader(t("compare.rerun_header"))
studio_runs = [i for i in chosen if not by_id[i].external]  # a script of its own is run again by its owner
if not studio_runs:
    st.caption(t("compare.rerun_only_studio"))
    st.stop()
again = st.selectbox(t("compare.rerun_which"), studio_runs, key="rerun_which", format_func=labels.__getitem__)
if st.button("🔁 " + t("compare.rerun"), key="rerun", help=t("train.queues_when_busy")):
    try:
        run_id = actions().start(store.replay_config(again),
                                 name=t("compare.rerun_name", name=by_id[again].name)[:80])
        st.session_state["run_id"] = run_id
        st.switch_page("app_pages/train.py")
    except (ValueError, OSError, RunGone) as e:
        st.error(t("train.could_not_start", error=say(e)))
