"""Runs' "Open a summary folder": a MindSpore summary folder (SummaryCollector, SummaryRecord: what MindInsight
read), or a folder of them, typed by a member of the team and read only where this server lets users read
(STUDIO_DATA_ROOTS, ui/session.check_user_path). Each training folder becomes a run (core/app/summary_import.py);
the same folder opened again updates its run."""
from __future__ import annotations

import json

import streamlit as st

from core.app.summary_follow import FOLLOWERS
from core.app.summary_import import INDEX, ImportReport, SummaryImport
from core.data.idx import DataError
from core.i18n import counted
from core.runs.rows import Run
from core.runs.store import RunStore
from core.summaries.graph_scopes import scope_tree
from core.summaries.training_folders import training_folders
from ui.graph_tree import graph_tree_html
from ui.identity import actions, refused_here
from ui.language import say, t
from ui.session import check_user_path
from ui.text import literal

__all__ = ["summary_panel", "imported_files"]

MAX_FOLDERS = 200  # training folders one Open reads (a larger tree: python -m core.cli.import_summary)


def summary_panel(store: RunStore) -> bool:
    """The panel; whether it imported something (the page then lists runs anew)."""
    with st.expander("📂 " + t("runs.summary_open")):
        st.caption(t("runs.summary_help"))
        if refused_here("import_summary"):
            return False
        typed = st.text_input(t("runs.summary_folder"), key="summary_folder")
        follow = st.toggle(t("runs.summary_follow"), key="summary_follow", help=t("runs.summary_follow_help"))
        if not st.button(t("runs.summary_button"), key="summary_open", disabled=not typed.strip()):
            return False
        try:
            root = check_user_path(typed.strip())
        except DataError as e:
            st.error(say(e))
            return False
        folders = training_folders(root, most=MAX_FOLDERS) if root.is_dir() else []
        if not folders:
            st.error(t("runs.summary_none", folder=literal(str(root))))
            return False
        act = actions()
        act.did("import_summary", None, target=str(root),
                detail=counted(len(folders), "folder") + (", followed" if follow else ""))
        for folder in folders:
            if follow:
                _follow(store, folder, act.person.ident)
            else:
                _said(SummaryImport(store, folder, who=act.person.ident).update(final=True))
        return True


def _follow(store: RunStore, folder, who: str) -> None:
    try:
        report = FOLLOWERS.follow(store, folder, who)
    except ValueError as e:
        st.error(say(e))
        return
    if report is None:
        st.info(t("runs.summary_followed_already", folder=literal(folder.name)))
    else:
        st.success(t("runs.summary_following", name=literal(report.name), steps=report.last_step))


def _said(report: ImportReport) -> None:
    st.success(t("runs.summary_done", name=literal(report.name), steps=report.last_step, skipped=report.skipped))
    if report.not_shown:
        st.caption(t("runs.summary_not_shown", tags=literal(", ".join(report.not_shown))))


def imported_files(store: RunStore, run: Run) -> None:
    """An imported run's last images of each tag and its graph as a tree of name scopes (ui/graph_tree.py)."""
    index_file = store.file(run.id, INDEX)
    if index_file is None:
        return
    index = json.loads(index_file.read_text())
    images = index.get("images", {})
    if images:
        st.caption(t("train.summary_images"))
        cols = st.columns(min(len(images), 4))
        for col, (tag, kept) in zip(cols * len(images), images.items(), strict=False):  # 4 a row
            path = store.file(run.id, kept["file"])
            if path is not None:
                col.image(str(path), caption=t("train.summary_image", tag=tag, step=kept["step"], n=kept["count"]))
    graph = store.file(run.id, index["graph"]) if index.get("graph") else None
    if graph is not None:
        nodes = json.loads(graph.read_text())
        with st.expander(t("train.summary_graph", n=len(nodes))):
            st.caption(t("train.graph_how"))
            st.html(graph_tree_html(scope_tree(nodes)))
