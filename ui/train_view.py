"""The Train page's pieces: the live view of a run (curves, controls, progress, log, its ranks) and Start."""
from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.config import TrainConfig
from core.runs import launcher
from core.runs.cluster import log_tail, rank_log, rank_log_dir
from core.runs.rows import RESUMABLE, RequestNotice, Run
from core.runs.store import RunBusy, RunStore
from ui.charts import EPOCH_AXIS, LEGEND_ON_TOP
from ui.format import STATUS_ICONS, fmt_duration
from ui.i18n import label, language, say, status_word, t
from ui.live import run_snapshot
from ui.text import code, literal

__all__ = ["RunView", "build_view", "start_form", "draw_run"]

CHART_POINTS = 1500  # step history is downsampled by the store so long runs keep pages small
LOG_LINES = 60

@dataclass(frozen=True)
class RunView:
    run: Run | None
    figure: go.Figure
    log: str                      # the tail of the run's log
    training_s: float | None      # training time so far: pauses (and the time before the first step) left out


def build_view(store: RunStore, run_id: str, live: bool) -> RunView:
    """Everything the view shows of a run, read once. live: the run is training and this view is shared by
    every viewer; its row then comes from the snapshot the sidebar reads too (a view that does not poll must
    read it fresh: a snapshot a moment old would stay on screen)."""
    log = "\n".join(line.message for line in store.logs(run_id, limit=LOG_LINES))
    steps = store.steps(run_id, max_points=CHART_POINTS)
    return RunView(run_snapshot(store, run_id) if live else store.get(run_id), curves(steps, store.epochs(run_id)),
                   log, steps[-1].elapsed if steps else None)


def curves(step_rows: list, epoch_rows: list) -> go.Figure:
    """Step loss (raw and smoothed), and epoch loss and accuracy (train and validation)."""
    steps, epochs = pd.DataFrame(step_rows), pd.DataFrame(epoch_rows)
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
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=80, b=10), legend=LEGEND_ON_TOP)
    fig.update_annotations(yshift=6)  # the subplot titles, clear of the legend above them
    fig.update_layout(legend_y=1.18)
    fig.update_xaxes(title_text=t("train.step"), row=1, col=1)
    fig.update_xaxes(title_text=t("train.epoch"), row=1, col=2, **EPOCH_AXIS)
    fig.update_xaxes(title_text=t("train.epoch"), row=1, col=3, **EPOCH_AXIS)
    return fig


def start_form(store: RunStore, config: TrainConfig, active: Run | None) -> None:
    """The next run's settings, its name, and Start (disabled while a run trains)."""
    with st.container(border=True):
        notice = st.session_state.pop("_train_notice", None)
        if notice:  # Start lost to a run started elsewhere: said here, while the page shows that run live
            st.error(say(notice))
        st.markdown(t("train.next_run", network=label(config.network), style=label(config.style),
                      mode=label(config.mode), optimizer=label(config.optimizer), lr=config.learning_rate,
                      batch=config.batch_size, epochs=config.epochs, seed=config.seed)
                    + (t("train.with_early_stopping") if config.early_stopping else ""))
        name = st.text_input(t("train.run_name"), key="run_name", max_chars=80)
        if st.button("▶️ " + t("train.start"), type="primary", disabled=active is not None,
                     help=t("train.one_at_a_time") if active else None):
            try:
                st.session_state["run_id"] = launcher.start(store, config, name=name or None)
                st.rerun()
            except RunBusy as e:
                st.session_state["_train_notice"] = e.said
                st.rerun()  # draw the page again around the run that won
            except (ValueError, OSError) as e:
                st.error(t("train.could_not_start", error=say(e)))


def draw_run(store: RunStore, view: RunView) -> None:
    """One run as the live view shows it: heading, controls, progress, figures, ranks, outcome and log."""
    run, figure, log = view.run, view.figure, view.log
    st.subheader(f"{STATUS_ICONS.get(run.status, '')} {literal(run.name)} — {status_word(run.status)}")
    if run.active:
        _controls(store, run)
    _progress(run, view.training_s)
    st.plotly_chart(figure, width="stretch", key="curves")
    if run.config.workers > 1:
        _ranks(store, run)
    if not run.active:
        _outcome(store, run)
    with st.expander(t("train.log"), expanded=run.active):
        st.code(log or t("train.empty_log"), language=None)


def _controls(store: RunStore, run: Run) -> None:
    a, b, _c, _ = st.columns([1, 1, 1, 4])
    if run.status == "paused":
        if a.button("▶️ " + t("train.resume"), key="resume"):
            st.toast(notice_text(store.request(run.id, "resume")))
    elif a.button("⏸️ " + t("train.pause"), key="pause", disabled=run.status != "running"):
        st.toast(notice_text(store.request(run.id, "pause")))
    if b.button("⏹️ " + t("train.stop"), key="stop"):
        st.toast(notice_text(launcher.stop(store, run.id)))


def notice_text(notice: RequestNotice) -> str:
    """What became of a pause/resume/stop request, in the user's language."""
    return t(f"train.notice_{notice.code}", what=t(f"train.what_{notice.what}"), name=literal(notice.name),
             status=status_word(notice.status) if notice.status else "")


def _progress(run: Run, training_s: float | None) -> None:
    frac = run.step / run.total_steps if run.total_steps else 0.0
    notice = st.empty()  # always present, so the layout does not shift between polls
    if run.phase == "compiling":
        notice.info("⏳ " + t("train.compiling"))
    where = dict(epoch=run.epoch, epochs=run.config.epochs, step=run.step, steps=run.total_steps or "?")
    st.progress(min(frac, 1.0), text=t("train.progress", **where, speed=run.samples_per_s or 0, eta=fmt_duration(run.eta))
                if run.active else t("train.progress_ended", **where))  # an ended run has no speed or ETA
    m = st.columns(4)
    m[0].metric(t("train.best_val_acc"), f"{run.best_val_acc:.2%}" if run.best_val_acc is not None else "–")
    m[1].metric(t("train.best_val_loss"), f"{run.best_val_loss:.4f}" if run.best_val_loss is not None else "–")
    m[2].metric(t("train.training_time"), fmt_duration(training_s),
                help=t("train.training_time_help", wall=fmt_duration(run.duration)))
    m[3].metric(t("train.source"), run.source)


def _outcome(store: RunStore, run: Run) -> None:
    if run.status in ("completed", "early_stopped"):
        st.success(t("train.finished", message=say(run)))
    elif run.status in ("stopped",):
        st.warning(t("train.stopped", message=say(run)))
    else:
        st.error(f"{status_word(run.status)}: {say(run)}")
    if run.checkpoint:
        st.caption(t("train.checkpoint", path=code(run.checkpoint)))
    if run.status in RESUMABLE and run.epoch < run.config.epochs:
        _resume_button(store, run)


def _resume_button(store: RunStore, run: Run) -> None:
    why = store.resumable(run)
    if st.button("🔁 " + t("train.resume_from_checkpoint"), key="resume_run", disabled=why is not None,
                 help=say(why) if why else t("train.resume_help")):
        try:
            launcher.resume(store, run.id)
            st.rerun(scope="app")
        except (RunBusy, ValueError) as e:
            st.error(say(e))
        except OSError as e:
            st.error(t("train.could_not_start_process", error=say(e)))


def _ranks(store: RunStore, run: Run) -> None:
    """Every data-parallel rank's state, and its log."""
    st.markdown(t("train.workers_header", workers=run.config.workers, batch=run.config.batch_size,
                  per=run.config.worker_batch))
    rows = store.ranks(run.id)
    if not rows:
        st.caption(t("train.workers_starting"))
        return
    now = time.time()
    table = pd.DataFrame([{
        t("train.w_rank"): r.rank, t("train.w_state"): t(f"train.ws_{r.state}"),
        t("train.w_step"): r.step, t("train.w_epoch"): r.epoch, t("train.w_host"): r.host,
        t("train.w_pid"): r.pid, t("train.w_seen"): f"{now - r.heartbeat:.0f} s" if r.heartbeat else "–",
        t("train.w_checksum"): (r.weights_sha256 or "")[:12],
        t("train.w_message"): r.said.say(language()) if r.said else r.message,  # a table cell: plain text
    } for r in rows])
    st.dataframe(table, hide_index=True, width="stretch")
    # A toggle, not an expander: an expander's body runs (and would read the log) on every poll.
    if st.toggle(t("train.worker_logs"), key=f"worker_logs_{run.id}"):
        rank = st.selectbox(t("train.w_rank"), [r.rank for r in rows], key=f"worker_log_{run.id}")
        st.code(log_tail(rank_log(rank_log_dir(store, run.id), rank)) or t("train.empty_log"), language=None)
