"""Data: choose the source (bundled / a folder / download), explore it, and see the pipeline on one sample."""
import threading
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import model_service
from core.data_source import validate_mnist_dir
from core.download import DownloadCancelled, download_mnist
from core.idx import DataError
from pages.common import check_user_path, default_download_dir, ensure_frame, get_config, set_config, split_arrays

ensure_frame()
st.title("🔢 Data")
config = get_config()


def use(data_dir):
    set_config(config.with_(data_dir=data_dir))
    st.rerun()


# --- source ------------------------------------------------------------------------------------------------
sources = ["bundled", "folder", "download"]
current = "bundled" if not config.data_dir else "folder"
source = st.radio("Source", sources, index=sources.index(current), horizontal=True, key="data_source",
                  format_func={"bundled": "Bundled 5,000 images (offline)", "folder": "My MNIST folder",
                               "download": "Download the full MNIST (70,000)"}.get)
if source == "bundled" and config.data_dir:
    use(None)
elif source == "folder":
    path = st.text_input("Folder with train/ and test/ (MindSpore quick-start layout)",
                         value=config.data_dir or "", key="folder_path")
    if st.button("Use this folder") and path:
        try:
            use(str(validate_mnist_dir(check_user_path(path)).root))
        except DataError as e:
            st.error(str(e))
elif source == "download":
    target = st.text_input("Download into", value=str(default_download_dir()), key="download_target")
    job = st.session_state.get("download")
    if job is None or job["state"] in ("done", "failed", "cancelled"):
        if st.button("⬇️ Download", type="primary"):
            try:
                target = str(check_user_path(target))
            except DataError as e:
                st.error(str(e))
                st.stop()
            job = {"state": "running", "progress": None, "error": None, "cancel": threading.Event(), "target": target}

            def work(job=job):
                try:
                    download_mnist(job["target"], progress=lambda p: job.__setitem__("progress", p),
                                   cancel=job["cancel"])
                    job["state"] = "done"
                except DownloadCancelled as e:
                    job["state"], job["error"] = "cancelled", str(e)
                except (DataError, OSError) as e:
                    job["state"], job["error"] = "failed", str(e)

            threading.Thread(target=work, daemon=True).start()
            st.session_state["download"] = job
            st.rerun()

    @st.fragment(run_every=0.5 if job and job["state"] == "running" else None)
    def download_status():
        job = st.session_state.get("download")
        if job is None:
            return
        p = job["progress"]
        if job["state"] == "running":
            if p is not None:
                frac = p.done / p.total if p.total else 0.0
                st.progress(frac, text=f"file {p.files_done + 1}/{p.files_total} {p.file}: "
                                       f"{p.done / 1e6:.1f} of {(p.total or 0) / 1e6:.1f} MB · {p.speed / 1e6:.2f} MB/s")
            if st.button("Cancel download"):
                job["cancel"].set()
        else:
            st.rerun()

    download_status()
    if job and job["state"] == "done":
        st.success(f"MNIST downloaded into {job['target']}.")
        if st.button("Use it"):
            use(str(Path(job["target"]).expanduser().resolve()))
    elif job and job["state"] in ("failed", "cancelled"):
        st.error(job["error"])

try:
    folder = validate_mnist_dir(config.data_dir)
except DataError as e:
    st.error(f"The selected data cannot be used: {e}")
    st.stop()
st.caption(f"In use: `{folder.root}` · {folder.train_count:,} training images"
           + (f" · {folder.test_count:,} test images" if folder.has_test else " · no test split"))

# --- explore -----------------------------------------------------------------------------------------------
split = st.radio("Split", ["train"] + (["test"] if folder.has_test else []), horizontal=True, key="explore_split")
images, labels = split_arrays(folder, split)

digit = st.selectbox("Show digit", ["all"] + list(range(10)), key="grid_digit")
idx = np.flatnonzero(labels == digit) if digit != "all" else np.arange(len(labels))
st.image([images[i] for i in idx[:40]], width=56, caption=[f"{labels[i]} (#{i})" for i in idx[:40]])

left, right = st.columns(2)
counts = np.bincount(labels, minlength=10)
fig = go.Figure(go.Bar(x=[str(i) for i in range(10)], y=counts, marker_color="#2f80ed"))
fig.update_layout(title="Class distribution", height=300, margin=dict(l=10, r=10, t=40, b=10))
left.plotly_chart(fig, width="stretch", key="classes")
hist = np.bincount(images.reshape(-1), minlength=256)
fig = go.Figure(go.Bar(x=np.arange(256), y=hist, marker_color="#27ae60"))
fig.update_layout(title="Pixel intensities (log scale)", yaxis_type="log", height=300,
                  margin=dict(l=10, r=10, t=40, b=10))
right.plotly_chart(fig, width="stretch", key="pixels")

st.subheader("Mean image per digit")
means = [images[labels == d].mean(axis=0).astype(np.uint8) for d in range(10)]
st.image(means, width=64, caption=[str(d) for d in range(10)])

st.subheader("The pipeline, step by step, on one sample")
i = int(st.number_input("Sample index", 0, len(labels) - 1, 0, key="pipeline_index"))
steps = model_service.pipeline_steps(images[i])
cols = st.columns(len(steps) + 1)
for col, (name, x) in zip(cols, steps):
    col.markdown(f"**{name}**")
    col.caption(f"shape {tuple(x.shape)} · {x.dtype}\n\nmin {x.min():.3f} · max {x.max():.3f}")
    view = x[0] if x.shape[0] == 1 else x[:, :, 0]
    col.image((view - view.min()) / max(float(view.max() - view.min()), 1e-6), width=84, clamp=True)
cols[-1].markdown("**Network input**")
cols[-1].caption(f"batched: (batch, 1, 28, 28) float32 · label {int(labels[i])} → int32 (TypeCast)")

st.subheader("Augmentation, on the same sample")
st.caption("What **Augment training images** (Configure) does to training images, each epoch anew: "
           "MindSpore's `RandomAffine` (rotation ≤ 10°, shift ≤ 10 %, scale 0.9–1.1). Validation and test "
           "images are never augmented.")
copies = model_service.augmented_copies(images[i], 7, seed=int(st.session_state.get("augment_seed", 0)))
st.image([images[i], *copies], width=84, caption=["original"] + [f"augmented {k + 1}" for k in range(7)])
if st.button("🎲 New random copies", key="augment_again"):
    st.session_state["augment_seed"] = int(st.session_state.get("augment_seed", 0)) + 1
    st.rerun()
