"""Configure: network, training style, mode, optimizer, loss and the rest; the URL carries the config."""
import streamlit as st

from core import config as C
from ui.config_form import ConfigForm, config_from_url, layer_table, write_url
from ui.i18n import label, t
from ui.session import get_config, set_config
from ui.text import URL_VALUE_MAX, literal

st.title("⚙️ " + t("nav.configure"))
config = get_config()
if not st.session_state.get("url_applied"):
    config, url_errors = config_from_url(config)
    st.session_state["url_applied"], st.session_state["url_errors"] = True, url_errors
    set_config(config)
for name, msg in st.session_state.get("url_errors", {}).items():
    st.warning(t("configure.ignored", name=literal(name, URL_VALUE_MAX), msg=literal(msg, 2 * URL_VALUE_MAX)))

form = ConfigForm(config)
left, right = st.columns(2)
with left:
    st.subheader(t("configure.network_header"))
    form.choice("network", C.NETWORKS)
    form.choice("style", C.STYLES)
    form.choice("mode", C.MODES)
    if form.choice("amp_level", C.AMP_LEVELS) != "O0":
        st.info(t("configure.amp_note"))
with right:
    st.subheader(t("configure.optimisation_header"))
    optimizer = form.choice("optimizer", C.OPTIMIZERS)
    form.text_number("learning_rate")
    if optimizer == "momentum":
        form.text_number("momentum")
    form.text_number("weight_decay")
    form.choice("loss", C.LOSSES)

a, b, c = st.columns(3)
with a:
    form.text_number("batch_size")
    form.text_number("epochs")
with b:
    form.text_number("seed")
    form.text_number("val_fraction", help=t("configure.val_fraction_help"))
with c:
    early_stopping = form.checkbox("early_stopping", slot=True)
    form.checkbox("augment", help=t("configure.augment_help"))
    form.text_number("patience", disabled=not early_stopping)  # it means nothing without early stopping
    form.text_number("num_parallel_workers")
    form.text_number("workers", help=t("configure.workers_help"))

config, errors = form.result()
if errors:
    st.error(t("configure.n_errors", n=len(errors)))
else:
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
st.caption(t("configure.data_caption", data=literal(config.data_dir) if config.data_dir else t("configure.bundled_data")))
