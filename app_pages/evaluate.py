"""Evaluate: test metrics of a run's checkpoint, a confusion matrix whose cells open their images, per-class
table, mistakes; from any image, Draw one like it."""
import numpy as np
import pandas as pd
import streamlit as st

from core.model.checkpoint_error import CheckpointError
from core.data.folders import validate_mnist_dir
from core.data.idx import DataError
from core.app import model_service
from ui.confusion import cell_gallery, chosen_cell, confusion_matrix, confusion_timelapse, forget_cell
from ui.language import say, t
from ui.run_picker import pick_trained_run
from ui.session import check_user_path, get_store, split_arrays
from ui.inside import render_inside

st.title("📊 " + t("nav.evaluate"))
run, checkpoint = pick_trained_run(t("evaluate.run"), key="eval_run")
default_dir = run.config.data_dir or ""
data_dir = st.text_input(t("evaluate.folder"), value=default_dir, key="eval_dir", help=t("evaluate.folder_help"))
try:
    chosen = data_dir or run.config.data_dir  # None: the bundled data
    folder = validate_mnist_dir(check_user_path(chosen) if chosen else None)
except DataError as e:
    st.error(say(e))
    st.stop()
splits = (["test"] if folder.has_test else []) + ["validation"]
if st.session_state.get("eval_split") not in (None, *splits):  # kept by its label, which names the test images'
    st.session_state["eval_split"] = splits[0]  # count: another folder's label is no split here (Streamlit returns it)
split = st.radio(t("evaluate.split"), splits, horizontal=True, key="eval_split",
                 format_func=lambda s: t("evaluate.split_test", n=folder.test_count) if s == "test"
                 else t("evaluate.split_validation"))

shifts = st.toggle(t("evaluate.shifts"), key="eval_shifts", help=t("evaluate.shifts_help"))

key = (checkpoint, str(folder.root), split)
if st.session_state.get("eval_key") != key:
    st.session_state.pop("eval_report", None)
    st.session_state.pop("eval_shifted", None)
    forget_cell()
# Evaluated once per (checkpoint, folder, split), then kept for this session.
if "eval_report" not in st.session_state:
    try:
        with st.spinner(t("evaluate.evaluating")):
            st.session_state["eval_report"] = model_service.evaluate(checkpoint, str(folder.root), split)
            st.session_state["eval_key"] = key
    except (CheckpointError, DataError, ValueError) as e:
        st.error(say(e))
        st.stop()
r = plain = st.session_state["eval_report"]
if shifts:  # the same checkpoint, each image read with its four 1-pixel shifts; kept beside the plain reading
    if "eval_shifted" not in st.session_state:
        with st.spinner(t("evaluate.evaluating")):
            st.session_state["eval_shifted"] = model_service.evaluate(checkpoint, str(folder.root), split,
                                                                      shifts=True)
    r = st.session_state["eval_shifted"]
c = st.columns(3)
c[0].metric(t("evaluate.accuracy"), f"{r.accuracy:.2%}",
            delta=t("evaluate.shifts_gain", points=100 * (r.accuracy - plain.accuracy)) if shifts else None)
c[1].metric(t("evaluate.loss_shifted") if shifts else t("evaluate.loss"), f"{r.loss:.4f}")
c[2].metric(t("evaluate.misclassified"), t("evaluate.n_of_m", n=len(r.misclassified), m=len(r.labels)))
if split == "validation" and run.best_val_acc is not None:  # two validation accuracies: say which is which
    at = t("evaluate.which_accuracy_at", epoch=run.checkpoint_epoch) if run.checkpoint_epoch else ""
    st.caption(t("evaluate.which_accuracy", at=at, best=run.best_val_acc, epoch=run.best_epoch or "?"))

left, right = st.columns([3, 2])
confusion_matrix(r, left)  # a click on a cell chooses it for the gallery below
table = pd.DataFrame({"digit": range(10), "precision": r.precision, "recall": r.recall, "f1": r.f1,
                      "support": r.support})
right.dataframe(table.style.format({"precision": "{:.3f}", "recall": "{:.3f}", "f1": "{:.3f}"}),
                hide_index=True, width="stretch", height="auto",  # the ten digits, no empty row under them
                column_config={c: t(f"evaluate.col_{c}") for c in table.columns})

st.subheader("🎞️ " + t("timelapse.header"))
if not confusion_timelapse(get_store().epochs(run.id), key="eval_timelapse"):
    st.caption(t("timelapse.none"))

file_split = "test" if split == "test" else "train"
images, _ = split_arrays(folder, file_split)
off = r.confusion.copy()
np.fill_diagonal(off, -1)
worst = np.unravel_index(off.argmax(), off.shape)
st.subheader(t("evaluate.cell"))
st.caption(t("evaluate.click_hint"))
true, pred = chosen_cell(st.columns(2), (int(worst[0]), int(worst[1])))  # the worst mistake until one is chosen
st.caption(t("evaluate.cell_caption", n=r.confusion[true, pred], true=true, pred=pred))
cell_gallery(images, r, r.cell(true, pred)[:24], lambda p: f"#{r.sample_ids[p]} p={r.probabilities[p, pred]:.2f}",
             key="cell")
st.subheader(t("evaluate.mistakes"))
cell_gallery(images, r, r.misclassified[:24],
             lambda p: f"{r.labels[p]}→{r.predicted[p]} p={r.probabilities[p, r.predicted[p]]:.2f}",
             key="mistakes")

st.subheader("🔬 " + t("evaluate.inside"))
choices = list(r.misclassified[:24]) or list(range(min(24, len(r.labels))))
shown_pos = st.selectbox(t("evaluate.image"), choices, key="inside_image",
                         format_func=lambda p: t("evaluate.image_option", id=r.sample_ids[p], true=r.labels[p],
                                                 pred=r.predicted[p]))
render_inside(checkpoint, images[r.sample_ids[shown_pos]], key="evaluate")
