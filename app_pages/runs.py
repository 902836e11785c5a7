"""Runs: every run in the store; open, rename, delete, download or upload a checkpoint, open a summary folder."""
import datetime as dt
from pathlib import Path

import pandas as pd
import streamlit as st

from core.app import model_service
from core.model.checkpoint_error import CheckpointError
from core.runs.store import RunBusy
from ui.export_view import export_panel
from ui.queue_view import queue_panel
from ui.records_view import may_take_out, record_take_out, records_download
from ui.format import fmt_duration, network_word, readable, run_choices
from ui.run_filters import filtered_runs, tags_and_note
from ui.run_picker import with_local_checkpoint
from ui.summary_view import summary_panel
from ui.identity import actions, attempt, history_panel, owner_label, refused_here
from ui.text import literal
from ui.language import label, say, source_word, status_word, t
from ui.session import get_store

st.title("🗂️ " + t("nav.runs"))
store = get_store()
store.reconcile()
runs = store.list_runs()

# Open while it holds a file: it opens by itself for an empty store.
with st.expander("⬆️ " + t("runs.upload"), expanded=not runs or st.session_state.get("upload") is not None):
    up = None if refused_here("upload") else st.file_uploader(t("runs.upload_label"), type=["ckpt"], key="upload")
    if up is not None and st.session_state.get("uploaded") != up.file_id:
        try:
            act = actions()
            run_id = model_service.import_checkpoint(store, up.getvalue(), up.name, owner=act.person.ident)
            act.did("upload", store.get(run_id), detail=up.name)
            st.session_state["uploaded"], st.session_state["upload_added"] = up.file_id, run_id
            runs = store.list_runs()
        except CheckpointError as e:
            st.error(say(e))
# The outcome below the expander, on every run of the page while the uploader holds the file: the expander can
# close as the first run appears (CI's browser saw it closed over "Added as run …").
if up is not None and st.session_state.get("uploaded") == up.file_id:
    st.success(t("runs.added", run_id=st.session_state["upload_added"]))

if summary_panel(store):
    runs = store.list_runs()

if not runs:
    st.info(t("runs.no_runs"))
    st.stop()
queue_panel(store, key="runs_queue")
shown_runs = filtered_runs(runs)
if not shown_runs:
    st.info(t("runs.none_match"))
    st.stop()

# The key figures, narrow enough for 1400 px at 150 % zoom; every setting is in the run's details below.
table = pd.DataFrame([{
    "name": r.name + (f"  🏷️ {', '.join(r.tags)}" if r.tags else ""),  # tags beside the name: 8 columns at most
    "status": status_word(r.status),
    "network": network_word(r) if r.external else label(r.config.network),
    "best val acc": None if r.best_val_acc is None else 100 * r.best_val_acc, "epochs": f"{r.epoch}/{r.config.epochs}",
    "duration": fmt_duration(r.duration), "created": dt.datetime.fromtimestamp(r.created).strftime("%Y-%m-%d %H:%M"),
    "owner": f"{owner_label(r)} · {source_word(r.source)}",  # who, and from where (the dashboard, a sweep, ...)
} for r in shown_runs])
# The accuracy as a bar with its figure: a run without one yet shows an empty cell (a number column shows a
# missing number as "None"; a Styler's na_rep does not reach it), and the column still sorts by number. The
# name column is wide: it carries the tags.
st.dataframe(table, hide_index=True, width="stretch",
             column_config={**{c: t(f"runs.col_{c.replace(' ', '_')}") for c in table.columns},
                            "name": st.column_config.TextColumn(t("runs.col_name"), width="large"),
                            "best val acc": st.column_config.ProgressColumn(t("runs.col_best_val_acc"),
                                                                            format="%.1f %%", min_value=0,
                                                                            max_value=100)})

labels = run_choices(shown_runs)
if (renamed := st.session_state.pop("_runs_renamed", None)) in labels:
    st.session_state["runs_selected"] = renamed  # its label changed with its name: keep it chosen
chosen_id = st.selectbox(t("train.run"), list(labels), format_func=labels.__getitem__, key="runs_selected")
run = with_local_checkpoint(store, next(r for r in shown_runs if r.id == chosen_id))
if run.external:  # what its script passed, as it passed it: the studio's config would only be its defaults
    st.caption(t("runs.script_settings"))
    st.dataframe(pd.DataFrame([{t("runs.setting"): str(k), t("runs.value"): readable(v)}  # cells: no Markdown
                               for k, v in (run.params or {}).items()], columns=[t("runs.setting"), t("runs.value")]),
                 hide_index=True, width="stretch")
else:
    st.dataframe(pd.DataFrame([{t("runs.setting"): t(f"configure.f_{k}"), t("runs.value"): readable(v)}
                               for k, v in run.config.to_dict().items()]), hide_index=True, width="stretch")
st.caption(t("runs.run_id", run_id=run.id) + " · " + t("runs.owned_by", owner=literal(owner_label(run)))
           + " · " + t("runs.from_source", source=source_word(run.source)))
st.caption(say(run))
tags_and_note(run)
a, b, c = st.columns(3)
with a:
    new_name = st.text_input(t("runs.name"), value=run.name, key=f"name_{run.id}")
    if st.button(t("runs.rename")) and new_name != run.name:
        try:
            if attempt(actions().rename, run, new_name):
                st.session_state["_runs_renamed"] = run.id
                st.rerun()
        except ValueError as e:
            st.error(say(e))
with b:
    if st.button(t("runs.open_on_train")):
        st.session_state["run_id"] = run.id
        st.switch_page("app_pages/train.py")
    if run.checkpoint and Path(run.checkpoint).exists() and may_take_out([run]):
        st.download_button("⬇️ " + t("runs.download_checkpoint"), Path(run.checkpoint).read_bytes(),
                           file_name=f"{run.name.replace(' ', '_').replace('/', '_')}.ckpt", key="download",
                           on_click=record_take_out, args=([run], "checkpoint"))
    elif run.checkpoint and not Path(run.checkpoint).exists():
        st.warning(t("runs.checkpoint_gone"))
    if run.checkpoint and Path(run.checkpoint).exists() and not run.active:
        export_panel(store, run, run.checkpoint)
with c:
    sure = st.checkbox(t("runs.sure"), key=f"sure_{run.id}")
    if st.button("🗑️ " + t("runs.delete"), disabled=not sure):
        try:
            if attempt(actions().delete, run):
                st.rerun()
        except RunBusy as e:
            st.error(say(e))

with st.expander(t("records.header")):
    records_download(store, [run], key="records_run")

if actions().person.admin:  # who did what (the one person of a local server is its admin)
    history_panel(store)
