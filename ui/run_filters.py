"""The Runs page's search box and filters (core/runs/annotations.RunFilter), and a run's tags and note."""
from __future__ import annotations

import streamlit as st

from core.messages import ExplainedValueError
from core.runs.people.annotations import RunFilter, all_tags
from core.runs.rows import Run
from ui.identity import actions, attempt
from ui.language import label, say, status_word, t

__all__ = ["filtered_runs", "tags_and_note"]


def filtered_runs(runs: list[Run]) -> list[Run]:
    """The runs the search and the filters keep (all of them until something is chosen)."""
    text, statuses, networks, owners, tags = st.columns([3, 2, 2, 2, 2])
    chosen = RunFilter(
        text.text_input("🔎 " + t("runs.search"), key="runs_search", placeholder=t("runs.search_hint")),
        frozenset(statuses.multiselect(t("runs.f_status"), sorted({str(r.status) for r in runs}),
                                       format_func=status_word, key="runs_f_status")),
        frozenset(networks.multiselect(t("runs.f_network"), sorted({r.config.network for r in runs}),
                                       format_func=label, key="runs_f_network")),
        frozenset(owners.multiselect(t("runs.f_owner"), sorted({r.submitter or "" for r in runs}),
                                     format_func=lambda o: o or t("runs.owner_nobody"), key="runs_f_owner")),
        frozenset(tags.multiselect(t("runs.f_tags"), all_tags(runs), key="runs_f_tags")))
    kept = chosen.apply(runs)
    if len(kept) < len(runs):
        st.caption(t("runs.shown", n=len(kept), total=len(runs)))
    return kept


def tags_and_note(run: Run) -> None:
    """The run's tags and note: edited by its owner or an admin, read by everyone."""
    may = actions().person.may("annotate", run)
    saved = st.session_state.pop("_notes_saved", None)  # said after the rerun that shows them (a toast before it
    if saved:                                            # was lost with the rerun)
        st.success(saved)
    tags = st.text_input(t("runs.tags"), value=", ".join(run.tags), key=f"tags_{run.id}", disabled=not may,
                         help=t("runs.tags_help"))
    notes = st.text_area(t("runs.notes"), value=run.notes, key=f"notes_{run.id}", disabled=not may, height=90)
    if may and st.button("💾 " + t("runs.save_notes"), key=f"save_notes_{run.id}"):
        try:
            if attempt(actions().annotate, run, tags, notes):
                st.session_state["_notes_saved"] = t("runs.notes_saved", name=run.name)
                st.rerun()
        except ExplainedValueError as e:
            st.error(say(e))
