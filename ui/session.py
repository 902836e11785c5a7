"""What a page reads from the server and the browser session: the run store, the config being edited,
cached image arrays, and the folders a user may name."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from core.app.access import check_data_path, data_roots
from core.config import TrainConfig
from core.data.folders import SPLIT_FILES, MnistFolder, load_arrays, validate_mnist_dir
from core.runs.launch import launcher
from core.runs.store import RunStore, default_data_dir
from core.runs.store.database import database_url_setting
from ui.language import say
from ui.deployment import shared_server

DISPATCH_ENV = "STUDIO_DISPATCH"

__all__ = ["get_store", "dispatch_queue", "get_config", "set_config", "split_arrays", "user_roots", "check_user_path",
           "default_download_dir", "check_download_target"]


@st.cache_resource
def _store(root: str, database_url: str | None) -> RunStore:
    return RunStore(root, database_url)


@st.cache_resource
def _dispatching(root: str, database_url: str | None) -> bool:
    if os.environ.get(DISPATCH_ENV, "1") == "0":  # 0: another process dispatches (the tests' AppTest process)
        return False
    launcher.serve(_store(root, database_url))
    return True


def dispatch_queue() -> None:
    """This server dispatches the store's queued runs (once per server and store; `python -m ui.serve` has
    started it before the first page). Pages only read the store: this is the frame's one call that starts work."""
    try:
        _dispatching(str(default_data_dir()), database_url_setting())
    except OSError as e:
        st.error(say(e))
        st.stop()


def get_store() -> RunStore:
    """The run store of this server (its folder and database are read from the environment on each call).
    Stops the page with the reason when the folder or the database cannot be used."""
    try:
        return _store(str(default_data_dir()), database_url_setting())
    except OSError as e:
        st.error(say(e))
        st.stop()


def get_config() -> TrainConfig:
    """The configuration this browser session is editing (defaults on first use)."""
    if "config" not in st.session_state:
        st.session_state["config"] = TrainConfig()
    return st.session_state["config"]


def set_config(config: TrainConfig) -> None:
    st.session_state["config"] = config


@st.cache_data(max_entries=4)
def _arrays(root: str, split: str, mtime_ns: int):
    return load_arrays(validate_mnist_dir(root), split)


def split_arrays(folder: MnistFolder, split: str):
    """Images and labels of a split, cached across reruns and sessions until the image file changes."""
    mtime_ns = (folder.split_dir(split) / SPLIT_FILES[split][0]).stat().st_mtime_ns
    return _arrays(str(folder.root), split, mtime_ns)


def user_roots() -> list[Path] | None:
    """The folders under which this server lets users name files (None: anywhere, a local server)."""
    return data_roots(shared_server(), get_store().root)


def check_user_path(path: str) -> Path:
    """A folder a user typed, resolved; DataError when this server does not let users read there."""
    return check_data_path(path, user_roots())


def default_download_dir() -> Path:
    roots = user_roots()
    return Path.home() / "mnist" if roots is None else downloads_root() / "mnist"


def downloads_root() -> Path:
    return get_store().root / "datasets"


def check_download_target(path: str) -> Path:
    """Where the Data page may download: anywhere readable on a local single-user server, else only under the
    store's datasets folder (never into the bundled data or elsewhere the server can write)."""
    if user_roots() is None:
        return check_user_path(path)
    return check_data_path(path, [downloads_root()])
