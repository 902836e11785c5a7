"""Configure: network, training style, mode, optimizer, loss and the rest; the URL carries the config."""
from dataclasses import fields

import pandas as pd
import streamlit as st

from core import config as C
from core.config import TrainConfig, parse_fields
from pages.common import ensure_frame, get_config, set_config

URL_FIELDS = [f.name for f in fields(TrainConfig) if f.name != "data_dir"]


def config_from_url(base: TrainConfig) -> tuple[TrainConfig, dict[str, str]]:
    """Apply the page URL's query parameters to base; unknown or invalid ones are reported, not applied."""
    values, errors = parse_fields({k: st.query_params[k] for k in st.query_params.keys() if k in URL_FIELDS})
    for key in st.query_params.keys():
        if key not in URL_FIELDS:
            errors[key] = f"unknown setting in the link ({key}={st.query_params[key]!r})"
    candidate = base.with_(**values)
    for name, msg in candidate.errors().items():
        errors[name] = f"{msg} (from the link)"
        values.pop(name, None)
    return base.with_(**{k: v for k, v in values.items() if k not in errors}), errors


@st.cache_data
def layer_table(network: str) -> pd.DataFrame:
    from core.model_service import MINDSPORE_LOCK
    with MINDSPORE_LOCK:
        from core.networks import build_network, summarize
        rows = summarize(build_network(network))
    return pd.DataFrame([{"layer": r.name, "type": r.kind, "output shape": str(r.output_shape),
                          "parameters": r.params} for r in rows])


def write_url(config: TrainConfig) -> None:
    defaults = TrainConfig()
    params = {k: str(getattr(config, k)).lower() if isinstance(getattr(config, k), bool) else str(getattr(config, k))
              for k in URL_FIELDS if getattr(config, k) != getattr(defaults, k)}
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)


ensure_frame()
st.title("⚙️ Configure")
config = get_config()
if not st.session_state.get("url_applied"):
    config, url_errors = config_from_url(config)
    st.session_state["url_applied"], st.session_state["url_errors"] = True, url_errors
    set_config(config)
for name, msg in st.session_state.get("url_errors", {}).items():
    st.warning(f"Ignored from the link: **{name}**: {msg}")

slots: dict[str, object] = {}
raw: dict[str, object] = {}


def choice(name: str, options: tuple, label: str, col=st):
    raw[name] = col.selectbox(label, options, index=options.index(getattr(config, name)),
                              format_func=lambda k: C.LABELS.get(k, k), key=f"cfg_{name}")
    slots[name] = col.empty()


def text_number(name: str, label: str, col=st, help=None):
    raw[name] = col.text_input(label, value=str(getattr(config, name)), key=f"cfg_{name}", help=help)
    slots[name] = col.empty()


left, right = st.columns(2)
with left:
    st.subheader("Network")
    choice("network", C.NETWORKS, "Network")
    choice("style", C.STYLES, "Training style")
    choice("mode", C.MODES, "Execution mode")
    choice("amp_level", C.AMP_LEVELS, "Mixed precision (amp level)")
    if raw["amp_level"] != "O0":
        st.info(C.AMP_CPU_NOTE)
with right:
    st.subheader("Optimisation")
    choice("optimizer", C.OPTIMIZERS, "Optimizer")
    text_number("learning_rate", "Learning rate")
    if raw["optimizer"] == "momentum":
        text_number("momentum", "Momentum")
    text_number("weight_decay", "Weight decay")
    choice("loss", C.LOSSES, "Loss")

a, b, c = st.columns(3)
with a:
    text_number("batch_size", "Batch size")
    text_number("epochs", "Epochs")
with b:
    text_number("seed", "Seed")
    text_number("val_fraction", "Validation fraction", help="share of the training images held out, per digit")
with c:
    raw["early_stopping"] = st.checkbox("Early stopping on validation loss", value=config.early_stopping,
                                        key="cfg_early_stopping")
    slots["early_stopping"] = st.empty()
    raw["augment"] = st.checkbox("Augment training images", value=config.augment, key="cfg_augment",
                                 help="random rotations up to 10°, shifts up to 10 %, scaling 0.9-1.1 "
                                      "(training images only); preview on the Data page")
    text_number("patience", "Patience (epochs)")
    text_number("num_parallel_workers", "Data pipeline workers")

values, errors = parse_fields(raw)
candidate = config.with_(**values)
errors = {**candidate.errors(), **errors}
for name, msg in errors.items():
    if name in slots:
        slots[name].error(msg)

if errors:
    st.error(f"{len(errors)} setting(s) need fixing; the last valid configuration stays in use until then.")
else:
    config = candidate
    set_config(config)
    write_url(config)
    st.success("Configuration is valid. The page link reproduces it; go to **Train** to start.")

table = layer_table(config.network)
st.subheader(f"{C.LABELS[config.network]} layers")
st.dataframe(table, hide_index=True, width="stretch")
st.metric("Trainable parameters", f"{table['parameters'].sum():,}")
data = config.data_dir or "the bundled 5,000 MNIST training images"
st.caption(f"Data: {data} (change it on the **Data** page).")
