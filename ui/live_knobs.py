"""The optimizer's live settings of a run on the Train page (core/live_settings.py: learning rate, momentum,
weight decay), one text box a knob and one Apply: the same list in the pacing box (ui/pacing.py) and in the
lesson bar's popover (ui/lesson_bar.py). A knob whose typed value differs from the run's is asked for from the
next step, through the run store, so every viewer sees it."""
from __future__ import annotations

import streamlit as st

from core.config import ConfigError, parse_field
from core.live_settings import LEARNING_RATE, optimizer_settings_of
from core.runs.rows import Run
from ui.curves import History
from ui.identity import actions, attempt
from ui.language import language, t
from ui.schedule_view import current_learning_rate

__all__ = ["live_values", "held_values", "knob_inputs", "knob_key", "ask_typed", "changes_text"]


def live_values(run: Run, history: History, asked: dict[str, float] | None = None) -> dict[str, float]:
    """The value of each knob at the run's next step: its start value (the config's; the learning rate's
    schedule), then the changes made or replayed so far, then what is asked and not yet taken (a paused run keeps
    its requests until its next step)."""
    values: dict[str, float] = {}
    for knob in optimizer_settings_of(run.config):
        if knob.name == LEARNING_RATE:
            values[knob.name] = current_learning_rate(run, history)
            continue
        changed = [c.value for c in history.setting_changes if c.setting == knob.name]
        values[knob.name] = changed[-1] if changed else float(getattr(run.config, knob.config_field or knob.name))
    return {**values, **{k: v for k, v in (asked or {}).items() if k in values}}


def held_values(values: dict[str, float], run: Run, history: History,
                asked: dict[str, float] | None = None) -> dict[str, float]:
    """values (live_values') less a learning rate that its schedule still moves at every step (no change made or
    asked yet): the values that change only when someone changes them. The Train page draws its controls again
    when these change; the progress line shows the moving rate at every poll."""
    moving = (run.config.lr_schedule != "constant" and LEARNING_RATE not in (asked or {})
              and not any(c.setting == LEARNING_RATE for c in history.setting_changes))
    return {k: v for k, v in values.items() if not (moving and k == LEARNING_RATE)}


def knob_key(setting: str, run: Run) -> str:
    return f"live_{setting}_{run.id}"


def knob_inputs(run: Run, values: dict[str, float], on_apply, disabled: bool = False, row: bool = False) -> None:
    """A text box a knob (its value now), then Apply, which calls on_apply(run, values) in its callback. row: the
    boxes side by side under short labels, Apply beside them (the lesson bar's popover, which must fit a projector's
    480 px: three boxes one under another pushed Apply below the fold)."""
    where = st.container(horizontal=True, vertical_alignment="bottom", gap="small") if row else st.container()
    for setting, value in values.items():
        where.text_input(t(f"train.{'short' if row else 'live'}_{setting}"), value=f"{value:g}",
                         key=knob_key(setting, run), disabled=disabled,
                         help=None if row else t("train.learning_rate_help"),  # row: the popover's button has it
                         width=120 if row else "stretch")
    where.button("✔️ " + t("train.apply_lr"), key="apply_lr", disabled=disabled, on_click=on_apply,
                 args=(run, values))
    if "_lr_error" in st.session_state:
        st.error(st.session_state.pop("_lr_error"))


def ask_typed(run: Run, values: dict[str, float], say, refuse) -> bool:
    """Ask for every knob whose typed value differs from its value now (the learning rate when none does, so
    that Apply always asks for something); False, and the reason kept for the page, when a box holds no number.
    say(notice): what became of each request; refuse(message): a refusal."""
    typed = {}
    for setting in values:
        try:
            typed[setting] = parse_field(setting, st.session_state[knob_key(setting, run)], language())
        except ConfigError as e:
            st.session_state["_lr_error"] = e.errors[setting]
            return False
    changed = {s: v for s, v in typed.items() if v != values[s]} or {LEARNING_RATE: typed[LEARNING_RATE]}
    for setting, value in changed.items():
        say(attempt(actions().ask, run, setting, value, show=refuse))
    return True


def changes_text(changes: tuple[tuple[int, str, float], ...]) -> str:
    """A config's replayed changes, as Configure lists them: "120: lr 0.05, 300: momentum 0.5"."""
    return ", ".join(f"{step}: {t(f'train.marker_{setting}', value=f'{value:g}')}" for step, setting, value in changes)
