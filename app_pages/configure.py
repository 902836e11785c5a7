"""Configure: Basic settings (network and its shape, learning rate, epochs, batch, augmentation) and Start;
Advanced settings for the framework's details; the network as a picture. The URL carries the config."""
import streamlit as st

from core import config as C
from core.networks import known_network
from core.presets import PRESETS
from ui.config_form import ConfigForm, config_from_url, layer_table, replace_config, write_url
from ui.identity import current_person
from ui.language import t
from ui.live_knobs import changes_text
from ui.network_view import network_picture, shape_buttons
from ui.schedule_view import schedule_chart
from ui.sweep_view import sweep_form
from ui.session import get_config, get_store, set_config
from ui.text import URL_VALUE_MAX, literal
from ui.start_pace import pace_link_errors
from ui.train_view import start_button

st.title("⚙️ " + t("nav.configure"))
config = get_config()
if not st.session_state.get("url_applied"):
    config, url_errors = config_from_url(config)
    st.session_state["url_applied"], st.session_state["url_errors"] = True, url_errors
    set_config(config)
for name, msg in {**st.session_state.get("url_errors", {}), **pace_link_errors()}.items():
    st.warning(t("configure.ignored", name=literal(name, URL_VALUE_MAX), msg=literal(msg, 2 * URL_VALUE_MAX)))

# --- Basic: what a lesson changes ---------------------------------------------------------------------------
form = ConfigForm(config)
heading, preset_button = st.columns([3, 2], vertical_alignment="bottom")
heading.subheader(t("configure.basic_header"))
if preset_button.button("⭐ " + t("configure.preset_best_5k"), key="preset_best_5k",
                        help=t("configure.preset_best_5k_help")):
    replace_config(PRESETS["best-5k"].with_(data_dir=config.data_dir))
shape, numbers = st.columns(2)
with shape:
    network = form.choice("network", C.NETWORKS)
    form.explained("network")
    shaped_by = spec.shape_fields if (spec := known_network(str(network))) else ()
    if "hidden" in shaped_by:
        shape_buttons(config)
with numbers:
    form.text_number("learning_rate")
    form.explained("learning_rate")
    form.choice("lr_schedule", C.LR_SCHEDULES)
    form.explained("lr_schedule")
    for name in ("epochs", "batch_size"):
        form.text_number(name)
        form.explained(name)
    form.checkbox("augment")
    form.explained("augment")
    form.checkbox("drawn_look")
    form.explained("drawn_look")

# --- Advanced: the framework's details ----------------------------------------------------------------------
with st.expander(t("configure.advanced_header")):
    a, b, c = st.columns(3)
    with a:
        form.choice("style", C.STYLES)
        form.choice("mode", C.MODES)
        if form.choice("amp_level", C.AMP_LEVELS) != "O0":
            st.info(t("configure.amp_note"))
        if "hidden" in shaped_by:
            form.text_number("hidden")
    with b:
        optimizer = form.choice("optimizer", C.OPTIMIZERS)
        if optimizer == "momentum":
            form.text_number("momentum")
        form.text_number("weight_decay")
        form.choice("loss", C.LOSSES)
        form.text_number("seed")
    with c:
        form.text_number("val_fraction")
        form.text_number("validate_every")
        early_stopping = form.checkbox("early_stopping", slot=True)
        form.text_number("patience", disabled=not early_stopping)  # it means nothing without early stopping
        form.text_number("num_parallel_workers")
        form.text_number("workers")
        form.text_number("steps_per_call")
    if config.setting_changes:
        st.caption(t("configure.replays", n=len(config.setting_changes), changes=changes_text(config.setting_changes)))
        if st.button(t("configure.forget_changes"), key="forget_lr_changes"):
            set_config(config.with_(setting_changes=()))
            st.rerun()

with st.expander("🔍 " + t("sweep.header")):
    sweep_section = st.container()  # filled below, with the valid config

config, errors = form.result()
if errors:
    st.error(t("configure.n_errors", n=len(errors)))
else:
    set_config(config)
    write_url(config)
    st.success(t("configure.valid_viewer" if current_person().viewer else "configure.valid"))
    if config.workers > 1:
        st.caption(t("configure.workers_batch", batch=config.batch_size, workers=config.workers,
                     per=config.worker_batch))
with numbers:
    schedule_chart(config)  # of the valid config: the schedule the run would follow
if start_button(get_store(), config, disabled_by=bool(errors), key="configure_start"):
    st.switch_page("app_pages/train.py")
with sweep_section:
    sweep_form(get_store(), config)

# --- The network as a picture -------------------------------------------------------------------------------
table = layer_table(config.network, config.hidden)
st.subheader(t("configure.layers", network=literal(config.shape_label)))
picture, numbers = st.columns([1, 1])
picture.markdown(network_picture(config), unsafe_allow_html=True)
numbers.metric(t("configure.trainable_params"), f"{table['parameters'].sum():,}")
numbers.dataframe(table, hide_index=True, width="stretch",  # parameters with thousands separators
                  column_config={**{c: t(f"configure.col_{c.replace(' ', '_')}") for c in table.columns},
                                 "parameters": st.column_config.NumberColumn(t("configure.col_parameters"),
                                                                             format="localized")})
st.caption(t("configure.data_caption",
             data=literal(config.data_dir) if config.data_dir else t("configure.bundled_data")))
