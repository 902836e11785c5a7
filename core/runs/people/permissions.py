"""Who is acting, and what they may do to a run: everyone signed in may view, start and copy; only a run's owner
or an admin may pause, resume, stop, step, pace, rename, delete or export it.

A run's owner is its `submitter` (who queued it): a signed-in user's e-mail (OpenID Connect) or name, a display
name given on a shared-password server, the OS user of a command line (from the OS, os.getuid(): not $LOGNAME or
$USER, which the caller sets). Admins: the app server's STUDIO_ADMINS, names or e-mail addresses separated by
commas; the server keeps its list in the store, and a command line reads it there, not from its caller's
environment. A local single-user server (loopback, no password, no sign-in) has one person,
who may do everything. No Streamlit here: pages, the command line and tests all ask these.
"""
from __future__ import annotations

import getpass
import hashlib
import os
import pwd
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from core.live_settings import LIVE_SETTINGS
from core.messages import Explained, Message
from core.runs.store import RunStore
from core.runs.store.team_records import fold_name

__all__ = ["ADMINS_ENV", "Person", "NotAllowed", "admins", "person", "LOCAL", "CONTROLS", "MEMBERS_ONLY",
           "claim_name", "MAX_NAME", "os_user", "command_line_person", "keep_admins"]
MAX_NAME = 40

ADMINS_ENV = "STUDIO_ADMINS"
ADMINS_SETTING = "admins"  # the app server's list, kept in the store for the command lines
# What only a run's owner or an admin may do (everyone may view, start, copy settings and re-run).
CONTROLS = ("pause", "resume", "stop", *LIVE_SETTINGS, "rename", "delete", "cancel", "move_to_front", "resume_run",
            "cancel_sweep", "export", "annotate")
# What a viewer (in by a class link) may not do either: they watch every run and draw on Draw & predict.
MEMBERS_ONLY = ("start", "sweep", "upload", "download_data", "finetune", "import_summary", "class_round")


class Owned(Protocol):
    """What has an owner: a run, a sweep (frozen dataclasses: read-only)."""
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def submitter(self) -> str | None: ...


class NotAllowed(Explained, PermissionError):
    """Refused: the message says who may do it."""


def admins(raw: str | None = None) -> frozenset[str]:
    """The admins this app server was started with (or those in `raw`), folded."""
    raw = os.environ.get(ADMINS_ENV, "") if raw is None else raw
    return frozenset(fold_name(a) for a in raw.split(",") if a.strip())


def keep_admins(store: RunStore) -> None:
    """The app server's admins, kept in its store: what a command line on any host then honours (a store on a
    read-only mount keeps what it has)."""
    if not store.read_only:
        store.keep_setting(ADMINS_SETTING, os.environ.get(ADMINS_ENV, ""))


def os_user() -> str:
    """Who runs this process, as the OS says (its real user id), whatever $LOGNAME or $USER say."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a user id with no name (a container's): the number is who it is
        return f"uid {os.getuid()}"


def script_user() -> str:
    """Who a tracked script or an imported summary is recorded as: $STUDIO_USER, else the login name ("" where
    this user id has none, as in some containers)."""
    try:
        return os.environ.get("STUDIO_USER") or getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (a container)
        return ""


def command_line_person(store: RunStore) -> Person:
    """The person a command line acts as: its OS user, an admin only when the app server's list (kept in the
    store) names them. Write access to the store itself is the real boundary (docs/deploy.md)."""
    name = os_user()
    return Person(name, admin=fold_name(name) in admins(store.setting(ADMINS_SETTING)))


@dataclass(frozen=True)
class Person:
    name: str            # what the pages show
    email: str = ""      # from the identity provider (empty without one)
    admin: bool = False  # an admin, or the one person of a local single-user server
    signed_in_with_provider: bool = False  # proven by OpenID Connect (not a display name or an OS user)
    viewer: bool = False  # in by a class link: watches and draws, starts and controls nothing

    @property
    def ident(self) -> str:
        """What a run records as its owner (the e-mail when known: names are not unique)."""
        return self.email or self.name

    def owns(self, run: Owned) -> bool:
        return bool(run.submitter) and fold_name(run.submitter or "") in {fold_name(self.ident), fold_name(self.name)}

    def may(self, what: str, run: Owned | None = None) -> bool:
        if self.viewer:
            return what not in CONTROLS and what not in MEMBERS_ONLY
        return what not in CONTROLS or self.admin or (run is not None and self.owns(run))

    def check(self, what: str, run: Owned | None = None) -> None:
        """NotAllowed (saying who may) unless this person may do `what` to run."""
        if self.viewer and not self.may(what, run):
            raise NotAllowed("viewer_only", what=Message(f"action_{what}"))
        if not self.may(what, run):
            raise NotAllowed("not_allowed", what=Message(f"action_{what}"), name=run.name if run else "",
                             owner=(run.submitter if run else "") or "nobody",
                             admins=", ".join(sorted(admins())) or ADMINS_ENV)


def person(name: str, email: str = "", single_user: bool = False, proven: bool = True) -> Person:
    """The person acting: an admin when listed in STUDIO_ADMINS (by name or e-mail) and their identity is proven
    (signed in with OpenID Connect, or the OS user of a command line), or the only person of a single-user
    server. A display name given on a shared-password server proves nothing, so it never makes an admin."""
    listed = admins()
    named = fold_name(name) in listed or (fold_name(email) in listed if email else False)
    return Person(name.strip(), email.strip(), single_user or (proven and named))


def claim_name(store: RunStore, name: str, token: str) -> Message | None:
    """Take a display name for the browser holding `token` (a secret kept in its cookie); None when it is this
    browser's (new or already), else why not. One browser per name, so nobody can act as another by typing their
    name; names listed as admins cannot be taken this way at all."""
    name = unicodedata.normalize("NFC", name.strip())
    if not name or len(name) > MAX_NAME or any(unicodedata.category(c).startswith("C") for c in name):
        return Message("name_invalid", {"n": MAX_NAME})
    if fold_name(name) in admins():
        return Message("name_reserved", {"name": name})
    if not store.claim_name(name, hashlib.sha256(token.encode()).hexdigest()):
        return Message("name_taken", {"name": name})
    return None


LOCAL = Person("", admin=True)  # a local single-user server's one person
