"""Runs page: export a run to MindIR or ONNX, prove the file reads as the checkpoint does (on the evaluation
split and on the drawing last made on Draw), and offer it for download."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.app import model_service
from core.data.idx import DataError
from core.data.folders import load_arrays, validate_mnist_dir
from core.model.checkpoint_error import CheckpointError
from core.model.export import FORMATS, ModelFormat, predict_script
from core.runs.people.finetune import evaluation_split
from core.runs.rows import Run
from core.runs.store import RunStore
from ui.identity import actions, attempt
from ui.language import say, t

__all__ = ["export_panel", "LAST_DRAWING"]

LAST_DRAWING = "last_drawing"  # session key: the 28×28 image Draw last read


def export_panel(store: RunStore, run: Run, checkpoint: str) -> None:
    fmt = st.radio(t("runs.export_format"), list(FORMATS), horizontal=True, key="export_format",
                   format_func=lambda f: t(f"runs.format_{f}"))
    if st.button("📦 " + t("runs.export"), key="export") and attempt(actions().export, run, fmt):
        try:
            with st.spinner(t("runs.exporting")):
                path = model_service.export(checkpoint, fmt, store.export_dir(run.id))
            st.session_state["exported"] = (run.id, fmt, path)
            with st.spinner(t("runs.checking")):
                st.session_state["export_checks"] = _checks(run, checkpoint, fmt, path)
        except (CheckpointError, DataError, OSError, RuntimeError, ValueError) as e:
            st.error(t("runs.export_failed", error=say(e)))
    done = st.session_state.get("exported")
    if not (done and done[0] == run.id and done[1] == fmt and done[2].exists()):
        return
    for line in st.session_state.get("export_checks", []):
        (st.success if line[0] else st.error)(line[1])
    st.caption(t("runs.netron"))
    name = f"{run.name.replace(' ', '_').replace('/', '_')}{done[2].suffix}"  # the name the button says
    st.download_button("⬇️ " + t("runs.download_file", name=name), done[2].read_bytes(), file_name=name,
                       key="download_export")
    st.caption(t("runs.predict_script"))
    st.code(predict_script(fmt, name), language="python")


def _checks(run: Run, checkpoint: str, fmt: ModelFormat, path: Path) -> list[tuple[bool, str]]:
    """(all identical, what to say) for the evaluation split and the last drawing."""
    # Any images prove the file reads the same; the evaluation split when there is one, else the training images.
    evaluation = evaluation_split(run.config)
    split, images, _ = evaluation or ("train", *load_arrays(validate_mnist_dir(run.config.data_dir), "train"))
    runtime = t(f"runs.runtime_{fmt}")
    lines = []
    a = model_service.check_export(checkpoint, path, fmt, images)
    lines.append((a.all_identical, t("runs.check_split", runtime=runtime, split=t(f"runs.split_{split}"),
                                     same=a.identical, n=a.n, diff=f"{a.max_probability_diff:.1e}")))
    drawing = st.session_state.get(LAST_DRAWING)
    if drawing is not None:
        d = model_service.check_export(checkpoint, path, fmt, drawing[None])
        lines.append((d.all_identical, t("runs.check_drawing", runtime=runtime, diff=f"{d.max_probability_diff:.1e}",
                                         same=t("runs.same") if d.all_identical else t("runs.different"))))
    return lines
