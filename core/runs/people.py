"""Who is acting, and what they may do to a run: everyone signed in may view, start and copy; only a run's owner
or an admin may pause, resume, stop, step, pace, rename, delete or export it.

A run's owner is its `submitter` (who queued it): a signed-in user's e-mail (OpenID Connect) or name, a display
name given on a shared-password server, the OS user of a command line. Admins: STUDIO_ADMINS, names or e-mail
addresses separated by commas. A local single-user server (loopback, no password, no sign-in) has one person,
who may do everything. No Streamlit here: pages, the command line and tests all ask these.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.messages import Explained
from core.runs.rows import Run

__all__ = ["ADMINS_ENV", "Person", "NotAllowed", "admins", "person", "LOCAL", "CONTROLS"]

ADMINS_ENV = "STUDIO_ADMINS"
# What only a run's owner or an admin may do (everyone may view, start, copy settings and re-run).
CONTROLS = ("pause", "resume", "stop", "step", "learning_rate", "delay", "rename", "delete", "export", "cancel",
            "move_to_front", "resume_run", "fine_tune")


class NotAllowed(Explained, PermissionError):
    """Refused: the message says who may do it."""


def admins() -> frozenset[str]:
    raw = os.environ.get(ADMINS_ENV, "")
    return frozenset(a.strip().lower() for a in raw.split(",") if a.strip())


@dataclass(frozen=True)
class Person:
    name: str            # what the pages show
    email: str = ""      # from the identity provider (empty without one)
    admin: bool = False  # an admin, or the one person of a local single-user server
    signed_in: bool = True

    @property
    def ident(self) -> str:
        """What a run records as its owner (the e-mail when known: names are not unique)."""
        return self.email or self.name

    def owns(self, run: Run) -> bool:
        return bool(run.submitter) and run.submitter.lower() in {self.ident.lower(), self.name.lower()}

    def may(self, what: str, run: Run) -> bool:
        return what not in CONTROLS or self.admin or self.owns(run)

    def check(self, what: str, run: Run) -> None:
        """NotAllowed (saying who may) unless this person may do `what` to run."""
        if not self.may(what, run):
            raise NotAllowed("not_allowed", what=what, name=run.name, owner=run.submitter or "nobody",
                             admins=", ".join(sorted(admins())) or ADMINS_ENV)


def person(name: str, email: str = "", single_user: bool = False) -> Person:
    """The person acting: an admin when listed in STUDIO_ADMINS (by name or e-mail), or the only person of a
    single-user server."""
    listed = admins()
    admin = single_user or name.strip().lower() in listed or (email.strip().lower() in listed if email else False)
    return Person(name.strip(), email.strip(), admin)


LOCAL = Person("", admin=True, signed_in=False)  # a local single-user server's one person
