"""Data: choose the source (bundled / a folder / download), explore it, and see the pipeline on one sample."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.app import model_service
from core.data.folders import validate_mnist_dir
from core.data.download_job import DownloadJob
from core.data.drawn_look import redrawn
from core.data.idx import DataError
from ui.charts import DIGITS, digit_axis
from ui.identity import actions, current_person, refused_here
from ui.language import say, t
from ui.pipeline_view import on_common_scale
from ui.session import (check_download_target, check_user_path, default_download_dir, get_config, set_config,
                        split_arrays)
from ui.text import code, literal
from ui.present import for_room

st.title("🔢 " + t("nav.data"))
config = get_config()


def use(data_dir):
    set_config(config.with_(data_dir=data_dir))
    st.rerun()


# --- source ------------------------------------------------------------------------------------------------
sources = ["bundled", "folder", "download"]
current = "bundled" if not config.data_dir else "folder"
source = st.radio(t("data.source"), sources, index=sources.index(current), horizontal=True, key="data_source",
                  format_func=lambda s: t(f"data.source_{s}"))
if source == "bundled" and config.data_dir:
    use(None)
elif source == "folder":
    path = st.text_input(t("data.folder"), value=config.data_dir or "", key="folder_path")
    if st.button(t("data.use_folder")) and path:
        try:
            use(str(validate_mnist_dir(check_user_path(path)).root))
        except DataError as e:
            st.error(say(e))
elif source == "download":
    target = st.text_input(t("data.download_into"), value=str(default_download_dir()), key="download_target")
    job: DownloadJob | None = st.session_state.get("download")
    if (job is None or job.ended) and not refused_here("download_data") and st.button("⬇️ " + t("data.download"),
                                                                                       type="primary"):
        try:
            st.session_state["download"] = DownloadJob.start(check_download_target(target))
            actions().did("download_data", target=str(target))
        except DataError as e:
            st.error(say(e))
            st.stop()
        st.rerun()

    polling = job is not None and not job.ended

    @st.fragment(run_every=0.5 if polling else None)
    def download_status():
        job = st.session_state.get("download")
        if job is None or job.ended:
            if polling:
                st.rerun()  # it just ended: draw the outcome below, and stop polling
            return
        p = job.progress
        if p is not None:
            frac = p.done / p.total if p.total else 0.0
            st.progress(frac, text=t("data.download_progress", n=p.files_done + 1, total=p.files_total,
                                     file=p.file, done=p.done / 1e6, size=(p.total or 0) / 1e6, speed=p.speed / 1e6))
        if st.button(t("data.cancel_download")):
            job.cancel()

    download_status()
    if job and job.state == "done":
        st.success(t("data.downloaded", target=literal(job.target)))
        if st.button(t("data.use_it")):
            use(str(job.target.expanduser().resolve()))
    elif job and job.state in ("failed", "cancelled"):
        st.error(say(job.error))

try:
    folder = validate_mnist_dir(config.data_dir)
except DataError as e:
    st.error(t("data.unusable", error=say(e)))
    st.stop()
shown_root = folder.root.name if current_person().viewer else folder.root  # a viewer sees no server path
st.caption(t("data.in_use", root=code(shown_root), n_train=folder.train_count)
           + (t("data.n_test", n=folder.test_count) if folder.has_test else t("data.no_test")))

# --- explore -----------------------------------------------------------------------------------------------
split = st.radio(t("data.split"), ["train"] + (["test"] if folder.has_test else []), horizontal=True,
                 key="explore_split", format_func=lambda s: t(f"data.split_{s}"))
images, labels = split_arrays(folder, split)

digit = st.selectbox(t("data.show_digit"), ["all"] + list(range(10)), key="grid_digit",
                     format_func=lambda d: t("data.all_digits") if d == "all" else str(d))
idx = np.flatnonzero(labels == digit) if digit != "all" else np.arange(len(labels))
st.image([images[i] for i in idx[:40]], width=56, caption=[f"{labels[i]} (#{i})" for i in idx[:40]])

left, right = st.columns(2)
counts = np.bincount(labels, minlength=10)
fig = go.Figure(go.Bar(x=DIGITS, y=counts, marker_color="#2f80ed"))
fig.update_layout(title=t("data.class_distribution"), height=300, xaxis=digit_axis(None),
                  margin=dict(l=10, r=10, t=40, b=10))
left.plotly_chart(for_room(fig), width="stretch", key="classes")
hist = np.bincount(images.reshape(-1), minlength=256)
fig = go.Figure(go.Bar(x=np.arange(256), y=hist, marker_color="#27ae60"))
fig.update_layout(title=t("data.pixel_intensities"), yaxis_type="log", height=300,
                  margin=dict(l=10, r=10, t=40, b=10))
right.plotly_chart(for_room(fig), width="stretch", key="pixels")

st.subheader(t("data.mean_images"))
means = [images[labels == d].mean(axis=0).astype(np.uint8) for d in range(10)]
st.image(means, width=64, caption=[str(d) for d in range(10)])

st.subheader(t("data.pipeline"))
i = int(st.number_input(t("data.sample_index"), 0, len(labels) - 1, 0, key="pipeline_index"))
steps = model_service.pipeline_steps(images[i])
views, (lo, hi) = on_common_scale(steps)
cols = st.columns(len(steps) + 1)
for col, (name, x), view in zip(cols, steps, views, strict=False):
    col.markdown(f"**{t('data.raw_step') if name.startswith('raw') else name}**")
    col.caption(t("data.step_caption", shape=tuple(x.shape), dtype=x.dtype, min=x.min(), max=x.max()))
    col.image(view, width=84, clamp=True)
cols[-1].markdown("**" + t("data.network_input") + "**")
cols[-1].caption(t("data.network_input_caption", label=int(labels[i])))
st.caption(t("data.common_scale", lo=lo, hi=hi))

st.subheader(t("data.augmentation"))
st.caption(t("data.augmentation_caption"))
copies = model_service.augmented_copies(images[i], 7, seed=int(st.session_state.get("augment_seed", 0)))
st.image([images[i], *copies], width=84,
         caption=[t("data.original")] + [t("data.augmented_n", n=k + 1) for k in range(7)])
if st.button("🎲 " + t("data.new_copies"), key="augment_again"):
    st.session_state["augment_seed"] = int(st.session_state.get("augment_seed", 0)) + 1
    st.rerun()
st.caption(t("data.drawn_look_caption"))
st.image([images[i], redrawn(images[i])], width=84, caption=[t("data.original"), t("data.drawn_look")])
