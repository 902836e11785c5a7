"""Train: start, pause, resume, stop; live progress, curves and log, read from the run store."""
import threading
import time

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core import launcher
from core.store import RESUMABLE, RunBusy
from pages.common import (POLL_S, STATUS_ICONS, ensure_frame, fmt_duration, get_config, get_store, label,
                          live_poll_interval, run_label, status_word, t)

CHART_POINTS = 1500  # step history is downsampled by the store so long runs keep pages small

ensure_frame()
st.title("🏋️ " + t("nav.train"))
store = get_store()
config = get_config()

# --- start -------------------------------------------------------------------------------------------------
active = store.active_run()
with st.container(border=True):
    st.markdown(t("train.next_run", network=label(config.network), style=label(config.style),
                  mode=label(config.mode), optimizer=label(config.optimizer), lr=config.learning_rate,
                  batch=config.batch_size, epochs=config.epochs, seed=config.seed)
                + (t("train.with_early_stopping") if config.early_stopping else ""))
    name = st.text_input(t("train.run_name"), key="run_name", max_chars=80)
    if st.button("▶️ " + t("train.start"), type="primary", disabled=active is not None,
                 help=t("train.one_at_a_time") if active else None):
        try:
            run_id = launcher.start(store, config, name=name or None)
            st.session_state["run_id"] = run_id
            st.rerun()
        except RunBusy as e:
            st.error(str(e))
        except (ValueError, OSError) as e:
            st.error(t("train.could_not_start", error=e))

# --- which run to show: the active one, else this session's last, else the newest --------------------------
runs = store.list_runs()
if not runs:
    st.info(t("train.no_runs"))
    st.stop()
ids = [r.id for r in runs]
default_id = active.id if active else st.session_state.get("run_id", ids[0])
shown = st.selectbox(t("train.run"), ids, index=ids.index(default_id) if default_id in ids else 0,
                     format_func=lambda i: run_label(next(r for r in runs if r.id == i)))
st.session_state["run_id"] = shown


def view(run_id: str):
    """The run, its curves and its log."""
    return store.get(run_id), curves(run_id), "\n".join(line["message"] for line in store.logs(run_id, limit=60))


class SharedView:
    """While a run is live every watching session polls. Build each run's view (the figure alone costs
    ~20 ms) at most every max_age_s, once for all sessions; while one session rebuilds it, the others get
    the previous one instead of queueing (queued rebuilds starved 16 viewers in bench/load_test.py).
    Nobody mutates what this returns."""

    def __init__(self, max_age_s: float):
        self.max_age_s, self.lock, self.entries = max_age_s, threading.Lock(), {}

    def get(self, key: tuple, build):
        """build() for key, or its recent result. The caller passes build: this object outlives the script
        run that created it, so it must not call that run's functions."""
        now = time.monotonic()
        with self.lock:
            entry = self.entries.get(key)  # [built_at, value, building]
            if entry and (now - entry[0] < self.max_age_s or entry[2]):
                return entry[1]
            if entry:
                entry[2] = True
        try:
            value = build()
        except BaseException:
            if entry:
                entry[2] = False
            raise
        with self.lock:
            self.entries[key] = [time.monotonic(), value, False]
            for stale in [k for k, e in self.entries.items() if time.monotonic() - e[0] > 60]:
                del self.entries[stale]
        return value


@st.cache_resource
def shared_views() -> SharedView:
    return SharedView(max_age_s=POLL_S / 2)


def curves(run_id: str):
    steps = pd.DataFrame(store.steps(run_id, max_points=CHART_POINTS))
    epochs = pd.DataFrame(store.epochs(run_id))
    fig = make_subplots(rows=1, cols=3, subplot_titles=(t("train.step_loss"), t("train.epoch_loss"),
                                                        t("train.epoch_accuracy")))
    if not steps.empty:
        fig.add_trace(go.Scatter(x=steps["step"], y=steps["loss"], name=t("train.step_loss"), mode="lines",
                                 line=dict(width=1, color="rgba(120,160,255,0.45)")), 1, 1)
        smooth = steps["loss"].ewm(alpha=0.1).mean()
        fig.add_trace(go.Scatter(x=steps["step"], y=smooth, name=t("train.smoothed"), mode="lines",
                                 line=dict(width=2, color="#2f80ed")), 1, 1)
    if not epochs.empty:
        for col, colour, pos in (("train_loss", "#f2994a", 2), ("val_loss", "#27ae60", 2),
                                 ("train_acc", "#f2994a", 3), ("val_acc", "#27ae60", 3)):
            if epochs[col].notna().any():
                fig.add_trace(go.Scatter(x=epochs["epoch"], y=epochs[col], name=t(f"train.{col}"),
                                         mode="lines+markers",
                                         line=dict(color=colour, dash="solid" if "train" in col else "dot")), 1, pos)
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h"))
    fig.update_xaxes(title_text=t("train.step"), row=1, col=1)
    fig.update_xaxes(title_text=t("train.epoch"), row=1, col=2)
    fig.update_xaxes(title_text=t("train.epoch"), row=1, col=3)
    return fig


def controls(run):
    a, b, c, _ = st.columns([1, 1, 1, 4])
    if run.status == "paused":
        if a.button("▶️ " + t("train.resume"), key="resume"):
            st.toast(store.request(run.id, "resume"))
    elif a.button("⏸️ " + t("train.pause"), key="pause", disabled=run.status != "running"):
        st.toast(store.request(run.id, "pause"))
    if b.button("⏹️ " + t("train.stop"), key="stop"):
        st.toast(launcher.stop(store, run.id))


def resume_button(run):
    why = store.resumable(run)
    if st.button("🔁 " + t("train.resume_from_checkpoint"), key="resume_run", disabled=why is not None,
                 help=why or t("train.resume_help")):
        try:
            launcher.resume(store, run.id)
            st.rerun(scope="app")
        except (RunBusy, ValueError) as e:
            st.error(str(e))
        except OSError as e:
            st.error(t("train.could_not_start_process", error=e))


def workers_view(run) -> None:
    """Every data-parallel worker's state, and its log."""
    st.markdown(t("train.workers_header", workers=run.config.workers, batch=run.config.batch_size,
                  per=run.config.worker_batch))
    rows = store.workers(run.id)
    if not rows:
        st.caption(t("train.workers_starting"))
        return
    now = time.time()
    table = pd.DataFrame([{
        t("train.w_rank"): w["rank"], t("train.w_state"): t(f"train.ws_{w['state']}"),
        t("train.w_step"): w["step"], t("train.w_epoch"): w["epoch"], t("train.w_host"): w["host"],
        t("train.w_pid"): w["pid"], t("train.w_seen"): f"{now - w['heartbeat']:.0f} s" if w["heartbeat"] else "–",
        t("train.w_checksum"): (w["weights_sha256"] or "")[:12], t("train.w_message"): w["message"],
    } for w in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    # A toggle, not an expander: an expander's body runs (and would read the log) on every poll.
    if st.toggle(t("train.worker_logs"), key=f"worker_logs_{run.id}"):
        from core.distributed import log_tail, rank_log, worker_log_dir
        rank = st.selectbox(t("train.w_rank"), [w["rank"] for w in rows], key=f"worker_log_{run.id}")
        st.code(log_tail(rank_log(worker_log_dir(store, run.id), rank)) or t("train.empty_log"), language=None)


was_active = store.get(shown).active
poll_s = live_poll_interval() if was_active else None


@st.fragment(run_every=poll_s)
def live(run_id: str):
    if was_active and live_poll_interval() != poll_s:
        st.rerun()  # viewers came or went: a full run registers the new interval
    run, figure, log = (shared_views().get((str(store.root), run_id), lambda: view(run_id)) if was_active
                        else view(run_id))
    if run is None:
        st.warning(t("train.deleted"))
        return
    if was_active and not run.active:
        st.rerun()  # finished: redraw the page once, without polling
    st.subheader(f"{STATUS_ICONS.get(run.status, '')} {run.name} — {status_word(run.status)}")
    if run.active:
        controls(run)
    frac = run.step / run.total_steps if run.total_steps else 0.0
    notice = st.empty()  # always present, so the layout does not shift between polls
    if run.phase == "compiling":
        notice.info("⏳ " + t("train.compiling"))
    st.progress(min(frac, 1.0), text=t("train.progress", epoch=run.epoch, epochs=run.config.epochs, step=run.step,
                                       steps=run.total_steps or "?", speed=run.samples_per_s or 0,
                                       eta=fmt_duration(run.eta)))
    m = st.columns(4)
    m[0].metric(t("train.best_val_acc"), f"{run.best_val_acc:.2%}" if run.best_val_acc is not None else "–")
    m[1].metric(t("train.best_val_loss"), f"{run.best_val_loss:.4f}" if run.best_val_loss is not None else "–")
    m[2].metric(t("train.elapsed"), fmt_duration(run.duration))
    m[3].metric(t("train.source"), run.source)
    st.plotly_chart(figure, width="stretch", key="curves")
    if run.config.workers > 1:
        workers_view(run)
    if not run.active:
        if run.status in ("completed", "early_stopped"):
            st.success(t("train.finished", message=run.message))
        elif run.status in ("stopped",):
            st.warning(t("train.stopped", message=run.message))
        else:
            st.error(f"{status_word(run.status)}: {run.message}")
        if run.checkpoint:
            st.caption(t("train.checkpoint", path=run.checkpoint))
        if run.status in RESUMABLE and run.epoch < run.config.epochs:
            resume_button(run)
    with st.expander(t("train.log"), expanded=run.active):
        st.code(log or t("train.empty_log"), language=None)


live(shown)
