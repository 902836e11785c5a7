"""Train: start, pause, resume, stop; live progress, curves and log, read from the run store."""
import streamlit as st

from ui.store_down import outage_safe
from ui.first_step import await_first_step
from ui.format import run_choices
from ui.identity import current_person
from ui.language import t
from ui.poll_interval import keep_pace, live_poll_interval, timed_update
from ui.present import presenting
from ui.session import get_config, get_store
from ui.queue_view import queue_panel
from ui.run_picker import draw_status, sidebar_status, status_slot
from ui.lesson_bar import lesson_bar, my_queued_line
from ui.train_view import curve_options, draw_body, draw_header, header_state, start_form, view_of

store = get_store()
active = store.active_run()
if presenting():  # the live run first, for the room; choosing a run and the next run's form below it
    live_slot, choice_slot = st.container(), st.container()
else:
    st.title("🏋️ " + t("nav.train"))
    first, second = st.container(), st.container()
    # while a run trains, it comes first (what moves is on the first screen after Start), the next run's form
    # below it; otherwise the form first
    live_slot = choice_slot = first if active else second
    with second if active else first:
        start_form(store, get_config())
        queue_panel(store, key="train_queue")

# --- which run to show: the active one, else this session's last, else the newest --------------------------
runs = store.list_runs()
if not runs:
    with status_slot():
        sidebar_status()
    st.info(t("train.no_runs_viewer" if current_person().viewer else "train.no_runs"))
    if presenting():
        start_form(store, get_config())
    st.stop()
ids = [r.id for r in runs]
default_id = active.id if active else st.session_state.get("run_id", ids[0])
# Names without a status: the live view below says the status, from the same read as the sidebar.
shown = choice_slot.selectbox(t("train.run"), ids, index=ids.index(default_id) if default_id in ids else 0,
                     format_func=run_choices(runs).__getitem__)
st.session_state["run_id"] = shown
shown_run = store.get(shown)  # None: deleted since the list was read (the view below says so)
was_active = shown_run is not None and await_first_step(store, shown_run).active
poll_s = live_poll_interval() if was_active else None
if not was_active:  # the sidebar polls the status itself; while the shown run trains, the live view draws it
    with status_slot():
        sidebar_status()


@st.fragment(run_every=poll_s)
@outage_safe
def live(run_id: str, page_view, drawn, options):
    """What changes at every step; the heading and controls above are drawn again (the whole page) only when
    what they show changes."""
    if poll_s is not None:  # the run was training when the page drew
        keep_pace(poll_s, live_poll_interval())  # viewers came or went, or updates got slower or faster
    with timed_update():
        # A live run's view is read again at each poll (one build shared by all viewers); an ended run's, read
        # for the heading above, does not change.
        view = view_of(store, run_id, live=True) if was_active else page_view
        if view is None:
            st.warning(t("train.deleted"))
            return
        if presenting():
            my_queued_line(store, view.run)
        draw_body(store, view, options)
        if was_active:
            with status_slot():
                draw_status(view.run)
        if was_active and (not view.run.active or header_state(view) != drawn):
            # Finished, paused, resumed, renamed, slowed: the whole page once, after this update has shown the
            # new step (a Start waited for the page's run before its first step appeared: bench/start_latency.py).
            st.rerun()


with live_slot:
    header = view_of(store, shown, was_active)
    if header is None:
        st.warning(t("train.deleted"))
        st.stop()
    if presenting():  # one screen for the room: the control bar, the curves under it, their options below
        lesson_bar(store, header.run, header.live, header.held)
        chart_slot = st.container()
        drawn, options = header_state(header), curve_options()
        with chart_slot:
            live(shown, header, drawn, options)
    else:
        drawn, options = draw_header(header)
        live(shown, header, drawn, options)
if presenting():
    with choice_slot.expander(t("train.next_run_header")):
        start_form(store, get_config())
