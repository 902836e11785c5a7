"""What core says to people, as a catalogue key and its values (section [messages] of core/locales), so that
a page can say it in its user's language; str() is the English the command line and the logs use."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from core.i18n import DEFAULT, text

__all__ = ["Message", "Explained", "ExplainedValueError"]


@dataclass(frozen=True)
class Message:
    key: str                                    # under [messages]
    values: dict[str, Any] = field(default_factory=dict)

    def say(self, lang: str = DEFAULT, escape=lambda v: v) -> str:
        """The message in lang; escape(value) is applied to every text value (a page shows them literally).
        A value may be a Message itself (a run's outcome inside "…; checkpoint: …"), said in the same lang."""
        values = {k: v.say(lang, escape) if isinstance(v, Message) else escape(str(v))
                  if isinstance(v, (str, PurePath)) else v for k, v in self.values.items()}
        if "status" in values and lang != DEFAULT:  # a run's status: a closed set of words with their own entries
            values["status"] = text(lang, f"status.{self.values['status']}")
        return text(lang, f"messages.{self.key}", **values)

    def __str__(self) -> str:
        return self.say()

    def to_dict(self) -> dict:
        return {"key": self.key, "values": {k: v.to_dict() if isinstance(v, Message) else str(v)
                                            if isinstance(v, PurePath) else v for k, v in self.values.items()}}

    @staticmethod
    def from_dict(d: dict) -> "Message":
        return Message(d["key"], {k: Message.from_dict(v) if isinstance(v, dict) and "key" in v else v
                                  for k, v in (d.get("values") or {}).items()})

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @staticmethod
    def from_json(data: str | None) -> "Message | None":
        return Message.from_dict(json.loads(data)) if data else None


class Explained(Exception):
    """An error whose words come from the catalogue: e.said is the Message, str(e) its English."""

    def __init__(self, key: str, /, **values):
        self.said = Message(key, values)
        super().__init__(self.said.say())


class ExplainedValueError(Explained, ValueError):
    """A value a person gave (a run to resume, a split, a name) that cannot be used."""
