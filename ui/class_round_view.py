"""Draw page: the class round. The teacher opens a round (a digit asked for, or each student's choice), the
projector shows the class's drawings as they arrive (a mosaic by digit, with the model's reading), hides any,
and teaches the model the class's handwriting; a student's phone shows what is asked, sends drawings and shows
how the model read each of theirs, before and after (core/runs/people/class_round.py)."""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Hashable
from dataclasses import replace

import numpy as np
import streamlit as st

from core.app import model_service
from core.app.html_report import LessonPart, html_report
from core.data.idx import DataError
from core.messages import Explained
from core.model.checkpoint_error import CheckpointError
from core.runs.people import finetune
from core.runs.people.class_round import (ClassDrawing, Lesson, Reading, Round, class_scores, counts, readings,
                                          split, teach)
from core.runs.rows import Run
from core.runs.store import RunStore
from ui.handwriting_view import finetune_progress, score_table, scored_once
from ui.identity import actions, attempt, current_person
from ui.language import say, status_word, t
from core.app.mosaic import mosaic_html, strip_html
from ui.prepared_download import FileMade, prepared_download
from ui.present import presenting
from ui.run_picker import choose_next
from ui.text import literal

__all__ = ["class_banner", "teacher_round", "send_to_class", "read_with_the_rounds_model", "MOSAIC_POLL_S",
           "PHONE_POLL_S"]

MOSAIC_POLL_S = 2.0  # the projector's mosaic: drawings appear within this
PHONE_POLL_S = 3.0   # a phone's look at the round (what is asked, its drawings' readings)
_SEEN = "_class_round_seen"  # session state: (round id, open) as this page run drew it


def _state(found: Round | None) -> tuple[int, bool] | None:
    return None if found is None else (found.id, found.open)


def _asked(found: Round) -> str:
    return t("class.asked_any") if found.asked is None else t("class.asked_digit", digit=found.asked)


def read_with_the_rounds_model(store: RunStore, key: str) -> None:
    """When a round opens, have the page's model choice (pick_trained_run(key=key)) take the round's model once:
    what the phone shows as its reading is then what the round reads the drawing as (and one model, loaded once,
    serves the whole class; a phone that chose the teacher's training run reloaded it at every epoch)."""
    found = Lesson(store).current()
    if found is None or not found.open or st.session_state.get("_class_model_for") == found.id:
        return
    st.session_state["_class_model_for"] = found.id
    choose_next(key, found.run_id)


# --- everyone: what the round asks, your drawings ------------------------------------------------------------
def class_banner(store: RunStore) -> None:
    """What an open round asks for, and this person's drawings of the lesson with their readings; the page runs
    again when a round opens or ends, so that the Send button comes and goes with it."""
    st.session_state[_SEEN] = _state(Lesson(store).current())
    st.fragment(run_every=PHONE_POLL_S)(_banner)(store)


def _banner(store: RunStore) -> None:
    lesson = Lesson(store)
    found = lesson.current()
    if _state(found) != st.session_state.get(_SEEN):
        st.rerun(scope="app")
    if found is not None and found.open:
        st.markdown("### ✋ " + _asked(found))
    mine = lesson.drawings(student=current_person().ident)
    if not mine:
        return
    tuned = _finished_finetune(store, lesson.rounds())
    shown = _readings(mine, tuned)
    st.caption(t("class.mine", n=len(mine), right=sum(d.read_right for d in mine)))
    st.html(strip_html(shown, _reading_caption))


def _reading_caption(r: Reading) -> str:
    before = "?" if r.before is None else r.before
    if r.after is None:
        return t("class.read_as", digit=r.drawing.label, read=before)
    return t("class.before_after", digit=r.drawing.label, before=before, after=r.after)


def _readings(mine: list[ClassDrawing], tuned: tuple[Run, Round] | None) -> list[Reading]:
    """Each of mine as read when sent and, once the class's fine-tune has finished, by it (kept per session)."""
    if tuned is None:
        return readings(model_service.predict, None, mine, ())
    run, round_ = tuned
    key = (run.id, run.checkpoint, tuple(d.id for d in mine))
    held = st.session_state.get("_class_readings")
    if held is None or held[0] != key:
        try:
            held = (key, readings(model_service.predict, run.checkpoint, mine, round_.held_out))
        except CheckpointError as e:
            st.caption(say(e))
            return readings(model_service.predict, None, mine, ())
        st.session_state["_class_readings"] = held
    return held[1]


def _finished_finetune(store: RunStore, rounds: list[Round]) -> tuple[Run, Round] | None:
    """The lesson's newest class fine-tune that finished with a checkpoint, with its round."""
    for round_ in reversed(rounds):
        run = store.get(round_.finetune_run) if round_.finetune_run else None
        if run is not None and not run.active and run.checkpoint:
            checkpoint = store.checkpoint_file(run)
            if checkpoint:
                return replace(run, checkpoint=checkpoint), round_
    return None


# --- a student's drawing into the round --------------------------------------------------------------------
def send_to_class(store: RunStore, image: np.ndarray) -> bool:
    """📤 Send (with the digit it is, when the round lets each student choose); False when no round is open."""
    lesson = Lesson(store)
    found = lesson.current()
    if found is None or not found.open:
        return False
    row = st.container(horizontal=True, vertical_alignment="bottom")
    label = found.asked if found.asked is not None else row.selectbox(
        t("draw.it_is"), range(10), key="class_label", help=t("class.it_is_help"))
    if row.button("📤 " + t("class.send", digit=label), key="class_send", type="primary"):
        _send(store, lesson, found, image, int(label))
    return True


def _send(store: RunStore, lesson: Lesson, found: Round, image: np.ndarray, label: int) -> None:
    digest = (found.id, hashlib.sha256(image.tobytes()).hexdigest(), label)
    if st.session_state.get("_class_sent") == digest:
        st.toast(t("class.already_sent"))
        return
    model = store.get(found.run_id)
    checkpoint = store.checkpoint_file(model) if model is not None else None
    try:
        if checkpoint is None:
            raise CheckpointError("class_model_gone")
        read = int(model_service.predict(checkpoint, image[None])[0].argmax())
        lesson.send(found, current_person().ident, image, label, read)
    except (Explained, ValueError) as e:
        st.error(say(e))
        return
    st.session_state["_class_sent"] = digest
    st.toast(t("class.sent", digit=label, read=read))


# --- the teacher: open, watch, hide, teach, end ---------------------------------------------------------------
def teacher_round(store: RunStore, run: Run) -> bool:
    """The round's panel on the teacher's Draw page: always in presentation mode, else behind a switch (on by
    itself during a round); whether it is shown."""
    lesson = Lesson(store)
    found = lesson.current()
    if not presenting() and not st.toggle("🧑‍🏫 " + t("class.panel"), key="class_panel",
                                          value=bool(found and found.open), help=t("class.panel_help")):
        return False
    _round_controls(lesson, run, found)
    if found is None:
        st.caption(t("class.none_yet"))
        return True
    st.fragment(run_every=MOSAIC_POLL_S)(_mosaic)(store)
    _teach(store, lesson)
    st.fragment(run_every=MOSAIC_POLL_S)(_lesson_end)(store)
    return True


def _round_controls(lesson: Lesson, run: Run, found: Round | None) -> None:
    row = st.container(horizontal=True, vertical_alignment="bottom")
    if found is not None and found.open:
        row.markdown("### " + t("class.round_open", n=found.id, asked=_asked(found)))
        if row.button("⏹️ " + t("class.end_round"), key="class_end_round"):
            attempt(lesson.end, current_person(), found)
            st.rerun()
        return
    asked = row.selectbox(t("class.ask_for"), [None, *range(10)], key="class_ask",
                          format_func=lambda d: t("class.any_digit") if d is None else str(d))
    if row.button("▶️ " + t("class.start_round"), key="class_start_round", type="primary",
                  help=t("class.start_help", name=run.name)):
        attempt(lesson.open, current_person(), run, asked)
        st.rerun()


def _mosaic(store: RunStore) -> None:
    """The class's drawings as they arrive, by digit, with the counts; hiding one takes it off the screen and
    out of the fine-tune."""
    lesson = Lesson(store)
    drawings = lesson.drawings()
    shown = [d for d in drawings if not d.hidden]
    st.caption(t("class.totals", n=len(shown), students=len({d.student for d in shown}),
                 hidden=len(drawings) - len(shown)))
    if shown:
        st.html(mosaic_html(shown, counts(shown), _row_title, lambda d: t("class.tile", id=d.id, read=d.read_as)))
    _hide_controls(lesson, drawings)
    _teach_button(store, lesson.current(), drawings)


def _row_title(count) -> str:
    return t("class.row", digit=count.digit, n=count.drawings, right=count.read_right)


def _hide_controls(lesson: Lesson, drawings: list[ClassDrawing]) -> None:
    """Hide (or show again) a drawing by the number on its tile: a number box keeps what is typed while the
    mosaic redraws around it (an open dropdown list would close at each redraw)."""
    if not drawings:
        return
    by_id = {d.id: d for d in drawings}
    row = st.container(horizontal=True, vertical_alignment="bottom")
    picked = row.number_input(t("class.which"), min_value=1, step=1, value=None, key="class_hide_pick",
                              placeholder="#", help=t("class.which_help"), width=160)
    chosen = by_id.get(int(picked)) if picked is not None else None
    hidden = chosen is not None and chosen.hidden
    if row.button(("👁️ " + t("class.show")) if hidden else ("🙈 " + t("class.hide")), key="class_hide",
                  disabled=chosen is None):
        assert chosen is not None
        attempt(lesson.hide, current_person(), chosen.id, not hidden)
        st.rerun(scope="fragment")
    if chosen is not None:
        row.caption(t("class.option", id=chosen.id, digit=chosen.label, student=chosen.student,
                      hidden=t("class.hidden_mark") if hidden else ""))


def _teach_button(store: RunStore, found: Round | None, drawings: list[ClassDrawing]) -> None:
    """🎓 Teach it our handwriting, counting the drawings shown now (in the mosaic's fragment)."""
    taught, held = split(drawings)
    base = store.get(found.run_id) if found is not None else None
    if st.button("🎓 " + t("class.teach", n=len(taught), held=len(held)), key="class_teach", type="primary",
                 disabled=not taught or base is None, help=t("class.teach_explain", epochs=finetune.EPOCHS)):
        assert found is not None and base is not None
        try:
            teach(store, found, base, drawings, actions().start)
            st.rerun(scope="app")
        except (Explained, DataError, ValueError, OSError) as e:
            st.error(say(e))


def _teach(store: RunStore, lesson: Lesson) -> None:
    """The class's fine-tune: its progress, then before and after."""
    drawings = lesson.drawings()
    tuned_round = next((r for r in reversed(lesson.rounds()) if r.finetune_run), None)
    tuned = store.get(tuned_round.finetune_run) if tuned_round and tuned_round.finetune_run else None
    if tuned is None or tuned_round is None:
        return
    if tuned.active:
        st.fragment(run_every=MOSAIC_POLL_S)(finetune_progress)(store, tuned.id, key="class_stop_finetune")
        return
    _class_before_after(store, tuned, tuned_round, drawings)


def _class_before_after(store: RunStore, tuned: Run, tuned_round: Round, drawings: list[ClassDrawing]) -> None:
    made = finetune.FineTune.of(tuned)
    checkpoint = store.checkpoint_file(tuned)
    base = store.get(made.base_run) if made is not None else None
    if made is None or checkpoint is None or base is None:
        st.warning(t("draw.finetune_ended", name=literal(tuned.name), status=status_word(tuned.status)))
        return
    key = (tuned.id, checkpoint, tuple(d.id for d in drawings))
    found = scored_once("_class_scores", key, lambda: class_scores(
        model_service.predict, made, checkpoint, base.config, drawings, tuned_round.held_out))
    if found is None:
        return
    st.markdown(t("class.teach_done", name=literal(tuned.name)))
    score_table(*found)
    if st.button("✏️ " + t("draw.try_tuned", name=literal(tuned.name)), key="class_try_tuned"):
        choose_next("draw_run", tuned.id)  # the next round reads with the model the class taught
        st.rerun()


def _lesson_end(store: RunStore) -> None:
    """The lesson file (a replayable HTML record) and the drawings (images and digits, no names), each made when
    asked and downloadable while they hold what the page shows (in a fragment: a drawing sent since, or one
    hidden, asks for them anew); or the end of the lesson: every drawing wiped."""
    lesson = Lesson(store)
    shown = tuple(lesson.drawings(shown_only=True))  # read once a poll, for both files
    row = st.container(horizontal=True)
    report = _lesson_file(store, lesson, shown)
    if report is not None:  # the rounds' models deleted since: no run to report
        prepared_download("_class_lesson_file", report[0], report[1], t("class.lesson_file"),
                          help=t("class.lesson_file_help"), where=row)
    prepared_download("_class_export", tuple(d.id for d in shown),
                      lambda: FileMade(lesson.export_idx(), "class-handwriting.zip", "application/zip"),
                      t("class.export"), help=t("class.export_help"), where=row)
    if row.button("🧹 " + t("class.end_lesson"), key="class_end_lesson", help=t("class.end_lesson_help")):
        gone = attempt(lesson.end_lesson, current_person())
        if gone is not None:
            st.toast(t("class.wiped", n=gone))
            st.rerun(scope="app")


def _lesson_file(store: RunStore, lesson: Lesson, drawings: tuple[ClassDrawing, ...]
                 ) -> tuple[Hashable, Callable[[], FileMade]] | None:
    """What the lesson file holds now, and how to make it (a report: the rounds' models and the class's
    fine-tunes, their curves with every live change and their confusion matrices epoch by epoch, the class's
    drawings shown (without names), and the before and after as this page last scored it); None with no run."""
    rounds = lesson.rounds()
    made_in_rounds = [*(r.run_id for r in rounds), *(r.finetune_run for r in rounds if r.finetune_run)]
    runs = [run for run in (store.get(run_id) for run_id in dict.fromkeys(made_in_rounds)) if run is not None]
    if not runs:
        return None
    held = st.session_state.get("_class_scores")
    split, scores = held[1] if held else ("none", [])
    wanted = (tuple((r.id, str(r.status), r.step) for r in runs), tuple(d.id for d in drawings),
              held[0] if held else None)

    def report() -> FileMade:
        part = LessonPart(drawings, split, tuple(scores))
        html = html_report(store, [r.id for r in runs], lesson=part).encode("utf-8")
        return FileMade(html, time.strftime("lesson-%Y-%m-%d.html"), "text/html")
    return wanted, report
