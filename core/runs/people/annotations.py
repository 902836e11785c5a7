"""Tags and notes on runs, and finding runs by them: what the Runs page's search box and filters ask.

Tags are short words a person puts on runs ("baseline", "lesson 3"), compared without case; a note is free text.
No Streamlit here: the page and tests call these."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.messages import ExplainedValueError
from core.runs.rows import Run

__all__ = ["MAX_TAGS", "MAX_TAG", "MAX_NOTES", "parse_tags", "checked_notes", "RunFilter", "all_tags"]

MAX_TAGS, MAX_TAG, MAX_NOTES = 10, 30, 2000


def _clean(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def parse_tags(text: str) -> tuple[str, ...]:
    """"baseline, lesson 3" -> ("baseline", "lesson 3"): trimmed, duplicates (any case) dropped, order kept."""
    tags, seen = [], set()
    for raw in text.split(","):
        tag = _clean(raw)
        if not tag or tag.casefold() in seen:
            continue
        if len(tag) > MAX_TAG or any(unicodedata.category(c).startswith("C") for c in tag):
            raise ExplainedValueError("tag_invalid", tag=tag[:MAX_TAG + 10], n=MAX_TAG)
        seen.add(tag.casefold())
        tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise ExplainedValueError("too_many_tags", n=len(tags), most=MAX_TAGS)
    return tuple(tags)


def checked_notes(text: str) -> str:
    notes = _clean(text)
    if len(notes) > MAX_NOTES:
        raise ExplainedValueError("notes_too_long", n=len(notes), most=MAX_NOTES)
    return notes


@dataclass(frozen=True)
class RunFilter:
    """What the Runs page shows: text found in a run's name, id, owner, network, tags or note (any case), and
    the statuses, networks, owners and tags chosen (empty: all)."""
    text: str = ""
    statuses: frozenset[str] = frozenset()
    networks: frozenset[str] = frozenset()
    owners: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()

    def keeps(self, run: Run) -> bool:
        if self.statuses and str(run.status) not in self.statuses:
            return False
        if self.networks and run.config.network not in self.networks:
            return False
        if self.owners and (run.submitter or "") not in self.owners:
            return False
        if self.tags and not {t.casefold() for t in self.tags} <= {t.casefold() for t in run.tags}:
            return False
        words = _clean(self.text).casefold().split()
        haystack = " ".join((run.name, run.id, run.submitter or "", run.source, run.config.network,
                             " ".join(run.tags), run.notes)).casefold()
        return all(w in haystack for w in words)

    def apply(self, runs: list[Run]) -> list[Run]:
        return [r for r in runs if self.keeps(r)]


def all_tags(runs: list[Run]) -> list[str]:
    """Every tag in use, each once (the first spelling met), sorted without case."""
    found: dict[str, str] = {}
    for run in runs:
        for tag in run.tags:
            found.setdefault(tag.casefold(), tag)
    return sorted(found.values(), key=str.casefold)
