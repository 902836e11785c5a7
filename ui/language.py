"""The session's UI language: from the link (?lang=), the sidebar switch, or the default; and its words."""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core import i18n
from core.messages import Message
from core.runs.rows import Run
from ui.callback_state import keep
from ui.text import URL_VALUE_MAX, literal

__all__ = ["LANG_PARAM", "language", "t", "say", "label", "source_word", "status_word", "language_switch"]

LANG_PARAM = "lang"  # the URL query parameter that remembers the language
_outside_script_lang = i18n.DEFAULT


def language() -> str:
    """This session's UI language. A link's ?lang= wins when it is new to the session; the sidebar switch
    changes it; the URL always carries it (except for the default), so a shared link keeps it."""
    global _outside_script_lang
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


def say(what: object) -> str:
    """Something core says (an error, a Message, a finished run's outcome) in this session's language, its
    values shown literally; anything else (an error from a library) literally as it is."""
    said = what if isinstance(what, Message) else getattr(what, "said", None)  # an Explained error, a Run
    if isinstance(said, Message):
        return said.say(language(), literal)
    return literal(what.message if isinstance(what, Run) else what)


def label(value: str) -> str:
    """A config value's display name (network, style, mode, optimizer, loss, amp level)."""
    return t(f"labels.{value}")


def source_word(source: str) -> str:
    """Where a run came from, in words (a source no catalogue names, as an older store's, as it is)."""
    key = f"sources.{source}"
    return t(key) if key in i18n.catalogue(i18n.DEFAULT) else source


def status_word(status: str) -> str:
    return t(f"status.{status}")


def language_switch() -> None:
    """The sidebar's language selector; warns once about an unknown ?lang= in a link."""
    lang = language()
    bad = st.session_state.pop("_lang_bad", None)
    if bad is not None:
        st.warning(t("common.bad_lang", value=literal(bad, URL_VALUE_MAX), choices=", ".join(i18n.LANGUAGES)))
    st.session_state["lang_choice"] = lang
    codes: list[str] = list(i18n.LANGUAGES)
    st.selectbox("🌐 " + t("common.language"), codes, key="lang_choice",
                 format_func=lambda code: i18n.LANGUAGES[code], on_change=keep, args=("lang_choice", "lang"))
