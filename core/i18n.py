"""The UI's words in each language: one catalogue per language in core/locales/<lang>.toml.

Keys are "<section>.<name>" (a section per page); values are str.format templates. A key may have a singular
form, "<name>_one", used when its value n is 1. Pages never hold a
user-facing string of their own: they call ui.language.t(key, **values). Config errors come from here
too (TrainConfig.errors(lang)), and so does what core says to people ([messages], core.messages): its
errors and a run's outcome; the command line and the logs use their English.
"""
from __future__ import annotations

import string
import tomllib
from functools import cache
from pathlib import Path

LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT = "en"
LOCALES = Path(__file__).with_name("locales")


def _flatten(table: dict, prefix: str = "") -> dict[str, str]:
    out = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


@cache
def catalogue(lang: str) -> dict[str, str]:
    if lang not in LANGUAGES:
        raise ValueError(f"no catalogue for language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    with open(LOCALES / f"{lang}.toml", "rb") as f:
        return _flatten(tomllib.load(f))


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def text(lang: str, key: str, /, **values) -> str:
    """The key's text in lang, formatted with values. A key missing from a catalogue is a bug (the tests
    catch it); at run time it falls back to English, then to the key itself, rather than break a page."""
    if values.get("n") == 1:  # a singular form where the catalogue has one ("finished 1 epoch", not "1 epochs")
        key = f"{key}_one" if f"{key}_one" in catalogue(lang) else key
    template = catalogue(lang).get(key) or catalogue(DEFAULT).get(key) or key
    return template.format(**values) if values else template


def counted(n: int, word: str, plural: str | None = None) -> str:
    """A count and its noun in English, for the command line and the logs: "1 step", "3 steps" ("1 run(s)" was
    how they read before; a page's text takes its catalogue's "_one" form instead)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
