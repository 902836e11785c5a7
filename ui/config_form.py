"""The Configure page's form: one widget per setting with its error under it, the config in the link, and
the network's layer table."""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.app.access import check_data_path
from core.app.model_service import MINDSPORE_LOCK
from core.config import TrainConfig, field_text, parse_fields
from core.data.idx import DataError
from core.runs.worker.start_weights import referenced_run
from ui.language import LANG_PARAM, label, language, t
from ui.present import PRESENT_PARAM
from ui.start_pace import DELAY_PARAM, START_PARAM
from ui.deployment import shared_server
from ui.session import get_store, set_config, user_roots

__all__ = ["URL_FIELDS", "config_from_url", "write_url", "layer_table", "ConfigForm", "replace_config"]

URL_FIELDS = [f.name for f in fields(TrainConfig) if f.name != "data_dir"]
KEPT_PARAMS = (LANG_PARAM, PRESENT_PARAM, START_PARAM, DELAY_PARAM)  # the link's other parameters, kept as they are


def config_from_url(base: TrainConfig) -> tuple[TrainConfig, dict[str, str]]:
    """Apply the page URL's query parameters to base; unknown or invalid ones are reported, not applied."""
    values, errors = parse_fields({k: st.query_params[k] for k in st.query_params if k in URL_FIELDS},
                                  language())
    for key in st.query_params:
        if key not in URL_FIELDS and key not in KEPT_PARAMS:
            errors[key] = t("configure.unknown_param", key=key, value=repr(st.query_params[key]))
    if values.get("init_checkpoint") and shared_server() and not _allowed_start(values["init_checkpoint"]):
        errors["init_checkpoint"] = t("configure.link_checkpoint")  # says nothing of what exists elsewhere
        values.pop("init_checkpoint")
    candidate = base.with_(**values)
    for name, msg in candidate.errors(language()).items():
        errors[name] = t("configure.from_link", msg=msg)
        values.pop(name, None)
    return base.with_(**{k: v for k, v in values.items() if k not in errors}), errors


def _allowed_start(value: str) -> bool:
    """Whether value names a run of this store with a checkpoint (run:RUN_ID), a file in the store's checkpoints
    or one under the folders users may read (STUDIO_DATA_ROOTS): what a shared server's link may start from,
    never another file of the server."""
    store = get_store()
    if (run_id := referenced_run(value)) is not None:
        run = store.get(run_id)
        return run is not None and bool(run.checkpoint)
    try:
        check_data_path(value, [store.checkpoints, *(user_roots() or [])])
    except (DataError, OSError, ValueError):
        return False
    return True


def write_url(config: TrainConfig) -> None:
    """Put every setting that differs from the defaults into the page's link (the language stays)."""
    defaults = TrainConfig()
    params = {k: field_text(k, getattr(config, k)) for k in URL_FIELDS if getattr(config, k) != getattr(defaults, k)}
    params.update({k: st.query_params[k] for k in KEPT_PARAMS if k in st.query_params})
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)


@st.cache_data
def layer_table(network: str, hidden: tuple[int, ...]) -> pd.DataFrame:
    with MINDSPORE_LOCK:
        from core.model.network_build import build_network, summarize  # deferred: MindSpore
        rows = summarize(build_network(network, hidden=hidden))
    return pd.DataFrame([{"layer": r.name, "type": r.kind, "output shape": "×".join(map(str, r.output_shape)),
                          "parameters": r.params} for r in rows])  # columns renamed per language on display


def replace_config(config: TrainConfig) -> None:
    """Make config the one in use and draw the form anew from it (its fields keep what they showed otherwise)."""
    set_config(config)
    for key in [k for k in st.session_state if str(k).startswith("cfg_")]:
        del st.session_state[key]
    st.rerun()


class ConfigForm:
    """Widgets for the settings of `config`: each keeps its raw value and a slot for its error message."""

    def __init__(self, config: TrainConfig):
        self.config = config
        self.raw: dict[str, Any] = {}  # each widget's value: text, a choice or a checkbox's bool
        self.slots: dict[str, DeltaGenerator] = {}  # where a field's error goes

    def choice(self, name: str, options: tuple, col=st) -> object:
        self.raw[name] = col.selectbox(t(f"configure.f_{name}"), options,
                                       index=options.index(getattr(self.config, name)), format_func=label,
                                       key=f"cfg_{name}", help=t(f"configure.x_{name}"))
        self.slots[name] = col.empty()
        return self.raw[name]

    def text_number(self, name: str, col=st, disabled: bool = False) -> None:
        value = field_text(name, getattr(self.config, name))
        # The MLP's + and − change `hidden` from outside this field: a key per shape makes it a new field showing
        # the new shape (a field keeps what the browser sent before over a new `value`).
        key = f"cfg_{name}_{value}" if name == "hidden" else f"cfg_{name}"
        self.raw[name] = col.text_input(t(f"configure.f_{name}"), value=value, key=key, help=t(f"configure.x_{name}"),
                                        disabled=disabled)
        self.slots[name] = col.empty()

    def checkbox(self, name: str, col=st, slot: bool = False) -> bool:
        self.raw[name] = col.checkbox(t(f"configure.f_{name}"), value=getattr(self.config, name), key=f"cfg_{name}",
                                      help=t(f"configure.x_{name}"))
        if slot:
            self.slots[name] = col.empty()
        return self.raw[name]

    def explained(self, name: str, col=st) -> None:
        """The setting's one-line explanation under it (Basic settings: read by people new to them)."""
        col.caption(t(f"configure.x_{name}"))

    def result(self) -> tuple[TrainConfig, dict[str, str]]:
        """The config the widgets describe and the errors (shown under their fields); the config is
        the previous one when there are errors."""
        values, errors = parse_fields(self.raw, language())
        candidate = self.config.with_(**values)
        errors = {**candidate.errors(language()), **errors}
        for name, msg in errors.items():
            if name in self.slots:
                self.slots[name].error(msg)
        return (self.config if errors else candidate), errors
