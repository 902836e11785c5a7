"""Draw page: say what a drawing is and keep it in "my handwriting"; the set (list, delete, export as IDX);
fine-tune the chosen model on it and see before/after."""
from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from core.app import model_service
from core.data.idx import DataError
from core.messages import Explained
from core.model.checkpoint_error import CheckpointError
from core.runs.people import finetune
from core.runs.people.handwriting import HandwritingSet
from core.runs.rows import Run
from core.runs.store import RunStore
from ui.confusion import DrawTarget
from ui.identity import actions, attempt, current_person, refused_here
from ui.language import say, status_word, t
from ui.live import SIDEBAR_POLL_S
from ui.pacing import notice_text
from ui.run_picker import choose_next
from ui.text import literal

__all__ = ["keep_drawing", "handwriting", "finetune_progress", "score_table", "scored_once"]

GRID = 10


def keep_drawing(store: RunStore, run: Run, image: np.ndarray, read_as: int, target: DrawTarget | None) -> None:
    """"It is a …" + Add: the drawing, as the network saw it, into the person's handwriting set."""
    row = st.container(horizontal=True, vertical_alignment="bottom")
    default = target.digit if target is not None else read_as
    label = row.selectbox(t("draw.it_is"), range(10), index=default, key=f"drawing_label_{read_as}_{default}",
                          help=t("draw.it_is_help"))
    if row.button("➕ " + t("draw.add"), key="add_drawing"):
        digest = hashlib.sha256(image.tobytes()).hexdigest()
        if st.session_state.get("_added_drawing") == (digest, label):
            st.toast(t("draw.already_added"))
            return
        try:
            HandwritingSet(store, current_person().ident).add(image, int(label), read_as=read_as, run_id=run.id)
        except (Explained, ValueError) as e:
            st.error(say(e))
            return
        st.session_state["_added_drawing"] = (digest, label)
        st.toast(t("draw.added", digit=label, read=read_as))


def handwriting(store: RunStore, run: Run) -> None:
    """The set, its export, and fine-tuning the chosen model on it (a toggle: it reads every drawing)."""
    mine = HandwritingSet(store, current_person().ident)
    drawings = mine.drawings()
    # Keyed by whether the set is empty: open by itself once the first drawing is in.
    if not st.toggle("✍️ " + t("draw.mine", n=len(drawings)), key=f"show_mine_{bool(drawings)}", value=bool(drawings)):
        return
    if not drawings:
        st.caption(t("draw.mine_empty"))
    for start in range(0, len(drawings), GRID):
        for col, d in zip(st.columns(GRID), drawings[start:start + GRID], strict=False):
            col.image(d.image, width=56, caption=t("draw.drawing_caption", digit=d.label, read=d.read_as))
            if col.button("🗑️", key=f"del_drawing_{d.id}", help=t("draw.delete_drawing")):
                mine.delete(d.id)
                st.rerun()
    if drawings:
        st.download_button("⬇️ " + t("draw.export_idx"), mine.export_idx(), file_name="my-handwriting.zip",
                           key="export_mine")
    _fine_tune(store, run, mine, drawings)


def _fine_tune(store: RunStore, run: Run, mine: HandwritingSet, drawings) -> None:
    st.markdown("#### 🎯 " + t("draw.finetune_header", name=literal(run.name)))
    st.caption(t("draw.finetune_explain", epochs=finetune.EPOCHS))
    if refused_here("finetune"):
        return
    if st.button("🎯 " + t("draw.finetune", n=len(drawings)), key="finetune", disabled=not drawings):
        try:
            made = finetune.plan(store, run, drawings)
            actions().start(made.config, name=f"{run.name} + my handwriting"[:80], source=finetune.SOURCE)
            st.rerun(scope="app")
        except (Explained, DataError, ValueError, OSError) as e:
            st.error(say(e))
    found = finetune.find(store, run)
    if found is None:
        return
    tuned, made = found
    if tuned.active:
        st.fragment(run_every=SIDEBAR_POLL_S)(finetune_progress)(store, tuned.id)
        return
    tuned = replace(tuned, checkpoint=store.checkpoint_file(tuned))
    if tuned.status not in ("completed", "early_stopped", "stopped") or not tuned.checkpoint:
        st.warning(t("draw.finetune_ended", name=literal(tuned.name), status=status_word(tuned.status)))
        return
    _before_after(mine, tuned, made)
    if run.id != tuned.id and st.button("✏️ " + t("draw.try_tuned", name=literal(tuned.name)), key="try_tuned",
                                        type="primary"):
        choose_next("draw_run", tuned.id)  # Draw reads with the fine-tuned model from the next page run on
        st.rerun()


def finetune_progress(store: RunStore, run_id: str, key: str = "stop_finetune") -> None:
    """A fine-tune's progress with its Stop (in a fragment: the page runs again once it has ended)."""
    run = store.get(run_id)
    if run is None or not run.active:
        st.rerun(scope="app")
    frac = run.step / run.total_steps if run.total_steps else 0.0
    st.progress(min(frac, 1.0), text=t("draw.finetune_progress", name=literal(run.name), step=run.step,
                                       steps=run.total_steps or "?", status=status_word(run.status)))
    if st.button("⏹️ " + t("train.stop"), key=key):
        notice = attempt(actions().stop, run)
        if notice is not None:
            st.toast(notice_text(notice))


def _before_after(mine: HandwritingSet, tuned: Run, made: finetune.FineTune) -> None:
    """Accuracy before and after, side by side: on the drawings it trained on, on drawings added since, and on
    the evaluation split."""
    key = (tuned.id, tuned.checkpoint, tuple(d.id for d in mine.drawings()))
    found = scored_once("_finetune_scores", key, lambda: _scores(mine, tuned, made))
    if found is None:
        return
    st.markdown(t("draw.finetune_done", name=literal(tuned.name)))
    score_table(*found)


def scored_once(session_key: str, key: tuple, score) -> tuple[str, list[finetune.Score]] | None:
    """(split, scores) from score(), computed once per key and kept in the session; None (said) when the models
    or images cannot be read."""
    if st.session_state.get(session_key, (None,))[0] != key:
        try:
            with st.spinner(t("draw.scoring")):
                st.session_state[session_key] = (key, score())
        except (CheckpointError, DataError, Explained) as e:
            st.error(say(e))
            return None
    return st.session_state[session_key][1]


def score_table(split: str, scores: list[finetune.Score]) -> None:
    """Accuracy before and after, a row a group of images (split: the evaluation split's name, or "none")."""
    rows = [{t("draw.col_images"): t(f"draw.group_{s.group}", n=s.n,
                                            split=t(f"runs.split_{split}") if split != "none" else ""),
             t("draw.col_before"): f"{s.before:.1%}",
             t("draw.col_after"): "–" if s.after is None else f"{s.after:.1%}",
             t("draw.col_change"): "–" if s.after is None else f"{(s.after - s.before) * 100:+.1f} " + t("draw.points")}
            for s in scores]
    st.table(pd.DataFrame(rows).set_index(t("draw.col_images")))  # a few rows: a plain table, readable at any size
    if split == "none":
        st.caption(t("draw.no_evaluation_split"))


def _scores(mine: HandwritingSet, tuned: Run, made: finetune.FineTune):
    used = mine.drawings(list(made.drawing_ids))
    later = [d for d in mine.drawings() if d.id > max(made.drawing_ids)]
    evaluation = finetune.evaluation_split(model_service.load_model(made.base_checkpoint).config)
    split, images, labels = evaluation or ("none", np.zeros((0, 28, 28), np.uint8), np.zeros(0, np.uint8))
    groups = {"drawings": mine.arrays(used), "held_out": mine.arrays(later), "evaluation": (images, labels)}
    return split, finetune.scores(model_service.predict, made.base_checkpoint, tuned.checkpoint, groups)
