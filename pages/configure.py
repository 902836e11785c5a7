"""Configure: network, training style, mode, optimizer, loss and the rest; the URL carries the config."""
from dataclasses import fields

import pandas as pd
import streamlit as st

from core import config as C
from core.config import TrainConfig, parse_fields
from pages.common import LANG_PARAM, ensure_frame, get_config, label, language, set_config, t

URL_FIELDS = [f.name for f in fields(TrainConfig) if f.name != "data_dir"]


def config_from_url(base: TrainConfig) -> tuple[TrainConfig, dict[str, str]]:
    """Apply the page URL's query parameters to base; unknown or invalid ones are reported, not applied."""
    values, errors = parse_fields({k: st.query_params[k] for k in st.query_params.keys() if k in URL_FIELDS},
                                  language())
    for key in st.query_params.keys():
        if key not in URL_FIELDS and key != LANG_PARAM:
            errors[key] = t("configure.unknown_param", key=key, value=repr(st.query_params[key]))
    candidate = base.with_(**values)
    for name, msg in candidate.errors(language()).items():
        errors[name] = t("configure.from_link", msg=msg)
        values.pop(name, None)
    return base.with_(**{k: v for k, v in values.items() if k not in errors}), errors


@st.cache_data
def layer_table(network: str) -> pd.DataFrame:
    from core.model_service import MINDSPORE_LOCK
    with MINDSPORE_LOCK:
        from core.networks import build_network, summarize
        rows = summarize(build_network(network))
    return pd.DataFrame([{"layer": r.name, "type": r.kind, "output shape": str(r.output_shape),
                          "parameters": r.params} for r in rows])  # columns renamed per language on display


def write_url(config: TrainConfig) -> None:
    defaults = TrainConfig()
    params = {k: str(getattr(config, k)).lower() if isinstance(getattr(config, k), bool) else str(getattr(config, k))
              for k in URL_FIELDS if getattr(config, k) != getattr(defaults, k)}
    if LANG_PARAM in st.query_params:
        params[LANG_PARAM] = st.query_params[LANG_PARAM]
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)


ensure_frame()
st.title("⚙️ " + t("nav.configure"))
config = get_config()
if not st.session_state.get("url_applied"):
    config, url_errors = config_from_url(config)
    st.session_state["url_applied"], st.session_state["url_errors"] = True, url_errors
    set_config(config)
for name, msg in st.session_state.get("url_errors", {}).items():
    st.warning(t("configure.ignored", name=name, msg=msg))

slots: dict[str, object] = {}
raw: dict[str, object] = {}


def choice(name: str, options: tuple, col=st):
    raw[name] = col.selectbox(t(f"configure.f_{name}"), options, index=options.index(getattr(config, name)),
                              format_func=label, key=f"cfg_{name}")
    slots[name] = col.empty()


def text_number(name: str, col=st, help=None):
    raw[name] = col.text_input(t(f"configure.f_{name}"), value=str(getattr(config, name)), key=f"cfg_{name}",
                               help=help)
    slots[name] = col.empty()


left, right = st.columns(2)
with left:
    st.subheader(t("configure.network_header"))
    choice("network", C.NETWORKS)
    choice("style", C.STYLES)
    choice("mode", C.MODES)
    choice("amp_level", C.AMP_LEVELS)
    if raw["amp_level"] != "O0":
        st.info(t("configure.amp_note"))
with right:
    st.subheader(t("configure.optimisation_header"))
    choice("optimizer", C.OPTIMIZERS)
    text_number("learning_rate")
    if raw["optimizer"] == "momentum":
        text_number("momentum")
    text_number("weight_decay")
    choice("loss", C.LOSSES)

a, b, c = st.columns(3)
with a:
    text_number("batch_size")
    text_number("epochs")
with b:
    text_number("seed")
    text_number("val_fraction", help=t("configure.val_fraction_help"))
with c:
    raw["early_stopping"] = st.checkbox(t("configure.f_early_stopping"), value=config.early_stopping,
                                        key="cfg_early_stopping")
    slots["early_stopping"] = st.empty()
    raw["augment"] = st.checkbox(t("configure.f_augment"), value=config.augment, key="cfg_augment",
                                 help=t("configure.augment_help"))
    text_number("patience")
    text_number("num_parallel_workers")
    text_number("workers", help=t("configure.workers_help"))

values, errors = parse_fields(raw, language())
candidate = config.with_(**values)
errors = {**candidate.errors(language()), **errors}
for name, msg in errors.items():
    if name in slots:
        slots[name].error(msg)

if errors:
    st.error(t("configure.n_errors", n=len(errors)))
else:
    config = candidate
    set_config(config)
    write_url(config)
    st.success(t("configure.valid"))
    if config.workers > 1:
        st.caption(t("configure.workers_batch", batch=config.batch_size, workers=config.workers,
                     per=config.worker_batch))

table = layer_table(config.network)
st.subheader(t("configure.layers", network=label(config.network)))
st.dataframe(table.rename(columns={c: t(f"configure.col_{c.replace(' ', '_')}") for c in table.columns}),
             hide_index=True, width="stretch")
st.metric(t("configure.trainable_params"), f"{table['parameters'].sum():,}")
st.caption(t("configure.data_caption", data=config.data_dir or t("configure.bundled_data")))
