"""Sweeps: a sweep's progress, its settings best first, parallel coordinates linked to the curves (seed groups
as mean ± std bands) and Promote, the best setting re-run with more epochs."""
import streamlit as st

from core.runs import sweeps
from ui.language import t
from ui.identity import actions, attempt
from ui.session import get_store
from ui.sweep_view import SWEEP_CHOSEN, importance, linked_views, progress, promote, settings_table
from ui.text import literal

st.title("🔍 " + t("nav.sweeps"))
store = get_store()
known = sweeps.list_sweeps(store)
if not known:
    st.info(t("sweep.none"))
    st.stop()
ids = [s.id for s in known]
chosen = st.session_state.get(SWEEP_CHOSEN)
names = {s.id: f"{s.name} ({t('sweep.status_' + s.status)})" for s in known}
# keyed by how many have finished: a choice whose label changed (running -> done) kept showing the old label
finished = sum(s.status == "done" for s in known)
sweep_id = st.selectbox(t("sweep.which"), ids, index=ids.index(chosen) if chosen in ids else 0,
                        key=f"sweep_pick_{finished}", format_func=names.__getitem__)
st.session_state[SWEEP_CHOSEN] = sweep_id
info = next(s for s in known if s.id == sweep_id)
if info.status == "open" and st.button("⏹️ " + t("sweep.cancel"), help=t("sweep.cancel_help"), key="cancel_sweep"):
    ended = attempt(actions().cancel_sweep, info)
    if ended is not None:
        st.toast(t("sweep.cancelled", n=ended))
        st.rerun()


@st.fragment(run_every=2.0 if info.status == "open" else None)
def live() -> None:
    if info.status == "open" and sweeps.is_done(store, info.id):
        st.rerun()  # finished: the whole page once more (its status in the choice above), then no more polling
    found = sweeps.settings(store, info)
    progress(info, found)
    st.caption(t("sweep.spec", sampler=t(f"sweep.sampler_{info.spec.sampler}"), seeds=info.spec.seeds,
                 prune=t("sweep.pruning_on") if info.spec.prune else t("sweep.pruning_off"),
                 who=literal(info.submitter) if info.submitter else t("sweep.started_locally")))
    if not found:
        return
    settings_table(found)
    if any(s.mean is not None for s in found):
        linked_views(store, info, found)
        importance(store, info, found)
        promote(store, info, found)


live()
