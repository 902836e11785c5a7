"""The Train page's pieces: the live view of a run (curves, controls, progress, log, its ranks) and Start."""
from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.live_settings import LEARNING_RATE
from core.config import TrainConfig
from core.runs.launch import launcher
from core.runs.worker.cluster import log_tail, rank_log, rank_log_dir
from core.runs.rows import RESUMABLE, Run
from core.runs.run_queue import RunQueue
from core.runs.store import RunStore
from ui.confusion import confusion_timelapse
from ui.curves import CurveOptions, History, curves, downsampling_note, read_history
from ui.first_step import send_first_step
from ui.format import STATUS_ICONS, fmt_duration, fmt_eta, sentence
from ui.identity import actions, attempt, refused_here
from ui.language import label, language, say, source_word, status_word, t
from ui.live import curve_views, run_snapshot, shared_views
from ui.pacing import controls, notice_text, pacing
from ui.present import chart_config, on_phone, presenting
from ui.queue_view import when_it_starts
from ui.live_knobs import held_values, live_values
from ui.start_pace import start_pace_picker
from ui.summary_view import imported_files
from ui.text import code, literal

__all__ = ["RunView", "HeaderState", "build_view", "view_of", "start_form", "start_button", "header_state",
           "curve_version", "draw_header", "draw_lesson", "draw_body", "notice_text", "curve_options"]

LOG_LINES = 60


@dataclass(frozen=True)
class RunView:
    run: Run
    history: History
    log: str                      # the tail of the run's log
    training_s: float | None      # training time so far: pauses (and the time before the first step) left out
    live: dict[str, float]        # an active run's live settings at its next step (ui/live_knobs.py; {}: ended)
    held: dict[str, float]        # of them, those that change only when someone changes them (held_values)


@dataclass(frozen=True)
class HeaderState:
    """What the part of a run's view drawn outside the polling fragment shows (heading, owner, controls, lesson
    pacing): when the fragment finds it changed, it draws the whole page again."""
    status: str
    name: str
    submitter: str
    step_delay: float | None
    # the knobs' values as people set them (RunView.held): a schedule's rate, which moves at every step, would
    # draw the whole page, its buttons too, at every poll
    live: tuple[tuple[str, float], ...] = ()

def build_view(store: RunStore, run_id: str, live: bool) -> RunView | None:
    """Everything the view shows of a run, read once (None: the run is gone). live: the run is training and this
    view is shared by every viewer; its row then comes from the snapshot the sidebar reads too (a view that does
    not poll must read it fresh: a snapshot a moment old would stay on screen)."""
    log = "\n".join(line.message for line in store.logs(run_id, limit=LOG_LINES))
    run = run_snapshot(store, run_id) if live else store.get(run_id)
    if run is None:
        return None
    per_epoch = run.total_steps // run.config.epochs if run.total_steps else None
    history = read_history(store, run_id, per_epoch)
    asked = store.requests(run_id) if run.active else None
    pending = asked.asked if asked else None
    values = live_values(run, history, pending) if run.active else {}
    held = held_values(values, run, history, pending)
    return RunView(run, history, log, history.steps[-1].elapsed if history.steps else None, values, held)


def view_of(store: RunStore, run_id: str, live: bool) -> RunView | None:
    """The run's view (None: the run is gone): for a live run one build shared by every viewer (ui.live), else
    read now."""
    if live:
        return shared_views().get((str(store.root), run_id), lambda: build_view(store, run_id, live=True))
    return build_view(store, run_id, live=False)


def header_state(view: RunView) -> HeaderState:
    run = view.run
    return HeaderState(run.status, run.name, run.submitter, run.step_delay, tuple(sorted(view.held.items())))


def start_button(store: RunStore, config: TrainConfig, disabled_by: bool = False, name: str | None = None,
                 key: str = "start") -> bool:
    """Start (disabled while the settings have errors); whether a run was started or queued. Never refused for
    being busy: while other runs train it joins the queue, and the page says where."""
    notice = st.session_state.pop("_train_notice", None)
    if notice:
        st.toast(notice)
    if refused_here("start"):
        return False
    busy = store.active_run() is not None
    if not busy and not disabled_by:  # its Start finds these settings' graphs compiled (a warm worker's); not
        launcher.want_warm_worker(store, config)  # beside a run, which it would slow, nor for settings refused
    pace = start_pace_picker(key)
    if not st.button("▶️ " + t("train.start"), type="primary", disabled=disabled_by, key=key,
                     help=t("train.queues_when_busy") if busy else None):
        return False
    try:
        run_id = actions().start(config, name=name or None, pace=pace)
    except (ValueError, OSError) as e:
        st.error(t("train.could_not_start", error=say(e)))
        return False
    st.session_state["run_id"] = st.session_state["started_run_id"] = run_id
    st.session_state["_await_first_step"] = run_id  # the Train page it opens draws the first step (ui/first_step)
    mine = next((w for w in RunQueue(store).waiting() if w.run.id == run_id), None)
    if mine is not None:  # said after the rerun that follows
        st.session_state["_train_notice"] = t("queue.queued", position=mine.position, when=when_it_starts(mine))
    return True


def start_form(store: RunStore, config: TrainConfig) -> None:
    """The next run's settings, its name, and Start."""
    if refused_here("start"):
        return
    with st.container(border=True):
        # MindSpore's own words (the training style, the execution mode) only where they differ from the
        # defaults: a newcomer reads the network and the few settings a lesson is about
        plain = (config.style, config.mode) == (TrainConfig().style, TrainConfig().mode)
        framework = "" if plain else t("train.next_run_framework", style=label(config.style), mode=label(config.mode))
        st.markdown(t("train.next_run", network=literal(config.shape_label), framework=framework,
                      optimizer=label(config.optimizer), lr=config.learning_rate, batch=config.batch_size,
                      epochs=config.epochs, seed=config.seed)
                    + (t("train.with_early_stopping") if config.early_stopping else ""))
        name = st.text_input(t("train.run_name"), key="run_name", max_chars=80)
        if start_button(store, config, name=name):
            st.rerun()


def draw_header(view: RunView) -> tuple[HeaderState, CurveOptions]:
    """The part of a run's view that does not change at every step, drawn outside the polling fragment (each
    element there is redrawn for every viewer at every poll, and a click on a button being redrawn could be
    lost): heading, owner, Pause/Resume/Stop, the lesson's pacing, the curves' options (presenting: the lesson
    bar instead, ui/lesson_bar.py). What it showed, and the options chosen."""
    run = view.run
    st.subheader(f"{STATUS_ICONS.get(run.status, '')} {literal(run.name)} — {status_word(run.status)}")
    if run.submitter:
        st.caption(t("runs.owned_by", owner=literal(run.submitter)))
    if run.imported:
        st.info(t("train.imported_live" if run.active else "train.imported",
                  folder=literal(str((run.params or {}).get("summary_dir", "?")))))
    elif run.external:
        st.info(t("train.external", pid=run.pid or "?", host=literal(run.host or "?")))
    if run.active and not run.imported:
        controls(run)
        draw_lesson(view)
    return header_state(view), curve_options()


def draw_lesson(view: RunView) -> None:
    """Step, slow motion and the optimizer's live settings for an active run the studio trains."""
    if view.run.active and not view.run.external and view.live:
        pacing(view.run, view.live)


def draw_body(store: RunStore, view: RunView, options: CurveOptions) -> None:
    """What the live view redraws at every poll: curves, progress, ranks, outcome and log."""
    run = view.run
    # The progress line (step, epoch, ETA) goes out before the curves: the browser receives and shows the step
    # while the charts, larger to send and to draw, follow (bench/start_latency.py). On a screen it stands above
    # them, on the first screen with them; in presentation mode under them: at 853×480 the lesson's bar and a
    # curve tall enough for the back row fill the first screen (tests/browser/test_browser_lesson.py).
    chart_slot = st.container() if options.present else None
    _progress(run, view.live.get(LEARNING_RATE))
    send_first_step(run)  # on the page Start opened: the step goes out now, before the curves are built
    with chart_slot or st.container():
        _curves(store, view, options)
    _figures(run, view.training_s)
    _timelapse(view)
    if run.config.workers > 1:
        _ranks(store, run)
    if run.imported:
        imported_files(store, run)
    if not run.active:
        _outcome(store, run)
    with st.expander(t("train.log"), expanded=run.active):
        log_box(view.log)


def log_box(text: str) -> None:
    """A log's lines as plain text in a box (saying so when it has none). Not st.code: its syntax highlighter
    is a 1.5 MB script that the browser fetches and evaluates when a page first shows one (0.3-0.6 s of a
    loaded machine's main thread), and the Train page that Start opens showed the first step only after it
    (docs/performance.md, "Start → first live step")."""
    with st.container(border=True):
        st.text(text or t("train.empty_log"))


def curve_options() -> CurveOptions:
    left, right, _ = st.columns([3, 2, 1])
    smoothing = left.slider(t("train.smoothing"), 0.0, 0.99, 0.8, 0.01, key="smoothing", help=t("train.smoothing_help"))
    log_y = right.toggle(t("train.log_scale"), key="log_y")
    return CurveOptions(smoothing, log_y, presenting(), compact=on_phone())


def _curves(store: RunStore, view: RunView, options: CurveOptions) -> None:
    """The curves with this viewer's smoothing and scale; one build per options, shared by every viewer."""
    h = view.history
    figure = curve_views().get((str(store.root), view.run.id, "curves", options, language()),
                               lambda: curves(h, options), curve_version(view))
    st.plotly_chart(figure, width="stretch", key="curves", config=chart_config())
    note = downsampling_note(view.history)
    if note:
        st.caption(note)


def curve_version(view: RunView) -> tuple:
    """What the curves must show as soon as it happens: the first step, the first epoch or validation (the
    accuracy panel's first point), a changed setting, a new status or pace; and, unless the run trains at full
    speed, every step, epoch and validation (paused, stepping or in slow motion a person watches each one). At
    full speed the rest waits for the figure's CURVES_REFRESH_S: a small network ends several epochs a second."""
    h, run = view.history, view.run
    at_once = (run.status, run.step_delay, bool(h.steps), bool(h.epochs), bool(h.validations), len(h.setting_changes))
    if run.status == "running" and not run.step_delay:
        return at_once
    return at_once + (len(h.steps), h.steps[-1].step if h.steps else 0, len(h.epochs), len(h.validations))


def _timelapse(view: RunView) -> None:
    """The confusion matrix through the epochs, behind a switch (a toggle, not an expander: an expander's body
    would be built at every poll)."""
    if sum(e.val_confusion is not None for e in view.history.epochs) < 2:
        return
    if st.toggle("🎞️ " + t("timelapse.toggle"), key=f"timelapse_{view.run.id}"):
        confusion_timelapse(view.history.epochs, key="train_timelapse")


def _progress(run: Run, learning_rate: float | None) -> None:
    frac = run.step / run.total_steps if run.total_steps else 0.0
    notice = st.empty()  # always present, so the layout does not shift between polls
    if run.phase == "compiling":
        notice.info("⏳ " + t("train.compiling"))
    where = dict(epoch=run.epoch, epochs=run.config.epochs, step=run.step, steps=run.total_steps or "?")
    speed = (t("train.speed_slow", delay=run.step_delay) if run.step_delay  # slow motion: its pace, not the steps'
             else t("train.speed", n=run.samples_per_s or 0))
    st.progress(min(frac, 1.0), text=t("train.progress", **where, speed=speed, eta=fmt_eta(run.eta),
                                       lr=f"{learning_rate:g}")
                if run.active else t("train.progress_ended", **where))  # an ended run has no speed or ETA


def _figures(run: Run, training_s: float | None) -> None:
    """The best accuracy and loss and the time trained, three to a row (never cut to "95.4…" at 853 px wide);
    where the run came from in a line under them."""
    m = st.columns(3)
    m[0].metric(t("train.best_val_acc"), f"{run.best_val_acc:.2%}" if run.best_val_acc is not None else "–")
    m[1].metric(t("train.best_val_loss"), f"{run.best_val_loss:.4f}" if run.best_val_loss is not None else "–")
    m[2].metric(t("train.training_time"), fmt_duration(training_s),
                help=t("train.training_time_help", wall=fmt_duration(run.duration)))
    st.caption(t("runs.from_source", source=source_word(run.source)))


def _outcome(store: RunStore, run: Run) -> None:
    said = say(run.outcome()) if run.checkpoint else say(run)  # the caption below names the checkpoint
    if run.status in ("completed", "early_stopped"):
        st.success(t("train.finished", message=sentence(said)))
    elif run.status in ("stopped",):
        st.warning(t("train.stopped", message=said))
    else:
        st.error(f"{status_word(run.status)}: {said}")
    if run.checkpoint:
        st.caption(t("train.checkpoint", path=code(run.checkpoint)))
    if run.status in RESUMABLE and run.epoch < run.config.epochs and not run.external:
        _resume_button(store, run)


def _resume_button(store: RunStore, run: Run) -> None:
    why = store.resumable(run)
    if st.button("🔁 " + t("train.resume_from_checkpoint"), key="resume_run", disabled=why is not None,
                 help=say(why) if why else t("train.resume_help")):
        try:
            if attempt(actions().resume_run, run) is not None:
                st.rerun(scope="app")
        except ValueError as e:
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
        log_box(log_tail(rank_log(rank_log_dir(store, run.id), rank)))
