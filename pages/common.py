"""Streamlit helpers shared by the pages: the session's config, the run store, formatting, run status."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import streamlit as st

from core import i18n
from core.access import check_data_path, data_roots
from core.config import TrainConfig
from core.data_source import SPLIT_FILES, MnistFolder, load_arrays, validate_mnist_dir
from core.store import ACTIVE, Run, RunStore, default_data_dir

STATUS_ICONS = {"starting": "⏳", "running": "🏃", "paused": "⏸️", "completed": "✅", "early_stopped": "✅",
                "stopped": "⏹️", "diverged": "💥", "failed": "❌", "interrupted": "⚠️"}
POLL_S = 1.0          # the live Train view, with few viewers
SIDEBAR_POLL_S = 3.0  # the sidebar's glance at the active run
# Every poll is a script run in the one server process, which shares two cores with the training: with
# many viewers, 1-second polls left each view updating rarely (bench/load_test.py). So the interval grows
# with the number of live viewers.
POLL_S_PER_VIEWER = 0.1
POLL_STEPS_S = (POLL_S, 2.0, 4.0, 8.0)
VIEWER_SEEN_S = 10.0


@st.cache_resource
def _viewers() -> tuple[threading.Lock, dict[str, float]]:
    """Live viewers of this server: session id -> when it last polled."""
    return threading.Lock(), {}


def live_poll_interval() -> float:
    """Seconds between polls of the live Train view for this session, given how many sessions watch."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    lock, seen = _viewers()
    now, ctx = time.monotonic(), get_script_run_ctx()
    with lock:
        if ctx is not None:
            seen[ctx.session_id] = now
        for sid in [k for k, t in seen.items() if now - t > VIEWER_SEEN_S]:
            del seen[sid]
        wanted = len(seen) * POLL_S_PER_VIEWER
    # a few steps, so that a viewer coming or going rarely changes anyone's interval
    return next((s for s in POLL_STEPS_S if s >= wanted), POLL_STEPS_S[-1])


# (file, icon, url path); the title is t("nav.<url path>"). app.py builds st.navigation from this list.
PAGES = [
    ("pages/data.py", "🔢", "data"),
    ("pages/configure.py", "⚙️", "configure"),
    ("pages/train.py", "🏋️", "train"),
    ("pages/evaluate.py", "📊", "evaluate"),
    ("pages/draw.py", "✏️", "draw"),
    ("pages/compare.py", "⚖️", "compare"),
    ("pages/weights.py", "📈", "weights"),
    ("pages/runs.py", "🗂️", "runs"),
]
DEFAULT_PAGE = "pages/train.py"
LANG_PARAM = "lang"  # the URL query parameter that remembers the language
_outside_script_lang = i18n.DEFAULT


def language() -> str:
    """This session's UI language. A link's ?lang= wins when it is new to the session; the sidebar switch
    changes it; the URL always carries it (except for the default), so a shared link keeps it."""
    global _outside_script_lang
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    if get_script_run_ctx(suppress_warning=True) is None:
        # Only AppTest calls a widget's format_func outside a script run (to find the option it shows):
        # answer in the language of the last run, as the server did when it drew that option.
        return _outside_script_lang
    url = st.query_params.get(LANG_PARAM)
    if url is not None and url != st.session_state.get("_lang_url"):
        st.session_state["_lang_url"] = url
        if url in i18n.LANGUAGES:
            st.session_state["lang"] = url
        else:
            st.session_state["_lang_bad"] = url
    lang = st.session_state.setdefault("lang", i18n.DEFAULT)
    if lang != i18n.DEFAULT and st.query_params.get(LANG_PARAM) != lang:
        st.query_params[LANG_PARAM] = lang
        st.session_state["_lang_url"] = lang
    elif lang == i18n.DEFAULT and LANG_PARAM in st.query_params:
        del st.query_params[LANG_PARAM]
        st.session_state["_lang_url"] = None
    _outside_script_lang = lang
    return lang


def t(key: str, /, **values) -> str:
    """The UI text for key in this session's language (core/locales/<lang>.toml)."""
    return i18n.text(language(), key, **values)


def page_title(url: str) -> str:
    return t(f"nav.{url}")


def _switch_language() -> None:
    st.session_state["lang"] = st.session_state["lang_choice"]


def language_switch() -> None:
    """The sidebar's language selector; warns once about an unknown ?lang= in a link."""
    lang = language()
    bad = st.session_state.pop("_lang_bad", None)
    if bad is not None:
        st.warning(t("common.bad_lang", value=bad, choices=", ".join(i18n.LANGUAGES)))
    st.session_state["lang_choice"] = lang
    st.selectbox("🌐 " + t("common.language"), list(i18n.LANGUAGES), key="lang_choice",
                 format_func=i18n.LANGUAGES.get, on_change=_switch_language)


def render_sidebar(live_status: bool = True) -> None:
    """Page links and the active run's status (live_status=False: drawn once; the Train page shows it live)."""
    with st.sidebar:
        st.markdown("### 🧠 " + t("common.app_name"))
        for path, icon, url in PAGES:
            st.page_link(path, label=page_title(url), icon=icon)
        st.divider()
        sidebar_status(live_status)
        language_switch()


@st.cache_data(max_entries=4)
def _arrays(root: str, split: str, mtime_ns: int):
    return load_arrays(validate_mnist_dir(root), split)


def split_arrays(folder: MnistFolder, split: str):
    """Images and labels of a split, cached across reruns and sessions until the image file changes."""
    mtime_ns = (folder.split_dir(split) / SPLIT_FILES[split][0]).stat().st_mtime_ns
    return _arrays(str(folder.root), split, mtime_ns)


def ensure_frame() -> None:
    """Give a page the frame even when app.py did not run it.

    Streamlit runs a pages/ script on its own (its old multipage mode) when a page URL is the first
    request a fresh server gets (and always under AppTest). Then this page draws the frame itself and
    switches the server to st.navigation mode for the requests that follow."""
    if st.session_state.get("_in_frame"):
        return
    from streamlit.runtime.pages_manager import PagesManager
    from core.runtime import prepare_process
    from pages.gate import require_access
    prepare_process(None)
    PagesManager.uses_pages_directory = False
    require_access()
    render_sidebar()


@st.cache_resource
def _store(root: str) -> RunStore:
    return RunStore(root)


def get_store() -> RunStore:
    """The run store of this server (its folder is read from the environment on each call). Stops the page
    with the reason when the folder cannot be used."""
    try:
        return _store(str(default_data_dir()))
    except OSError as e:
        st.error(str(e))
        st.stop()


def _user_roots() -> list[Path] | None:
    from pages.gate import server_exposed
    return data_roots(server_exposed(), get_store().root)


def check_user_path(path: str) -> Path:
    """A folder a user typed, resolved; DataError when this server does not let users read there."""
    return check_data_path(path, _user_roots())


def default_download_dir() -> Path:
    roots = _user_roots()
    return Path.home() / "mnist" if roots is None else roots[-1] / "mnist"


def get_config() -> TrainConfig:
    """The configuration this browser session is editing (defaults on first use)."""
    if "config" not in st.session_state:
        st.session_state["config"] = TrainConfig()
    return st.session_state["config"]


def set_config(config: TrainConfig) -> None:
    st.session_state["config"] = config


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def status_word(status: str) -> str:
    return t(f"status.{status}")


def label(value: str) -> str:
    """A config value's display name (network, style, mode, optimizer, loss, amp level)."""
    return t(f"labels.{value}")


def run_label(run: Run) -> str:
    acc = t("common.val_acc_suffix", acc=run.best_val_acc) if run.best_val_acc is not None else ""
    return f"{STATUS_ICONS.get(run.status, '')} {run.name} ({run.config.network}, {status_word(run.status)}{acc})"


def pick_trained_run(label: str, key: str) -> Run:
    """A selectbox of finished runs that have a checkpoint; stops the page with a hint when there is none."""
    runs = [r for r in get_store().list_runs() if r.checkpoint and r.status not in ACTIVE]
    if not runs:
        st.info(t("common.no_trained_model"))
        st.stop()
    return st.selectbox(label, runs, format_func=run_label, key=key)


def sidebar_status(live: bool = True) -> None:
    """The active run's status, polled while one trains (if live)."""
    store = get_store()
    active = store.active_run()

    @st.fragment(run_every=SIDEBAR_POLL_S if active and live else None)
    def status():
        run = store.active_run()
        if run is None:
            st.caption(t("common.no_run_training"))
            if active is not None:  # it just ended: refresh the whole page once to stop polling
                st.rerun()
            return
        st.markdown(f"**{STATUS_ICONS.get(run.status, '')} {run.name}**")
        frac = run.step / run.total_steps if run.total_steps else 0.0
        st.progress(min(frac, 1.0), text=t("common.sidebar_progress", status=status_word(run.status),
                                                    epoch=run.epoch, epochs=run.config.epochs,
                                                    eta=fmt_duration(run.eta)))

    status()
    st.caption(t("common.run_store", path=store.root))

