"""How runs and durations read on the pages."""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

from core.app.comparison import stated
from core.runs.rows import Run
from core.training.clock import about
from ui.language import label, say, t

__all__ = ["STATUS_ICONS", "sentence", "fmt_eta", "fmt_duration", "network_word", "run_choice_label", "run_choices",
           "readable"]

STATUS_ICONS = {"starting": "⏳", "running": "🏃", "paused": "⏸️", "completed": "✅", "early_stopped": "✅",
                "stopped": "⏹️", "diverged": "💥", "failed": "❌", "interrupted": "⚠️", "queued": "⏳",
                "cancelled": "✖️", "pruned": "✂️"}


def sentence(text: str) -> str:
    """A message as a sentence of its own: its first letter capitalised ("Finished 10 epochs")."""
    return text[:1].upper() + text[1:]


def fmt_eta(seconds: float | None) -> str:
    """A time left in the session's language, as people say it: "about 20 s" (core.training.clock.about)."""
    return say(about(seconds))


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def readable(value: object) -> str:
    """A table cell: floats with 4 significant digits (not 0.2345330992937088), None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def network_word(run: Run) -> str:
    """The run's network as lists name it: the studio's config's, or what an external run's script said."""
    if run.external:
        if (known := stated(run).get("network")) is not None:  # one of the studio's: "LeNet5" is LeNet-5
            return label(str(known))
        said = (run.params or {}).get("network") or (run.params or {}).get("model")
        return str(said) if said else t("runs.script_network")
    return run.config.network


def run_choice_label(run: Run) -> str:
    """A run in a list that stays on screen while the run changes: what does not change (no status)."""
    return f"{run.name} ({network_word(run)} · {time.strftime('%Y-%m-%d %H:%M', time.localtime(run.created))})"


def run_choices(runs: Iterable[Run]) -> dict[str, str]:
    """The label of each run, by id, in a box a person picks runs from. A browser keeps a choice by its label, so
    a label that changed between two reruns (a status, an accuracy) dropped the choice: these say only what does not
    change while a run trains, and two runs alike in that are told apart by their ids' ends."""
    labels = {r.id: run_choice_label(r) for r in runs}
    count = Counter(labels.values())
    return {i: text if count[text] == 1 else f"{text} · {i[-6:]}" for i, text in labels.items()}
