"""Which address the class link points at: one that students' phones can open.

The teacher's browser may reach the server at an address no phone can: `localhost` or `127.0.0.1` when the
studio runs on the teacher's own computer. Then the link takes this computer's network address instead, when the
server listens on every interface; when it listens on this computer only, no address works, and the teacher is
told so and what to change.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass
from enum import StrEnum
from collections.abc import Callable
from urllib.parse import urlsplit

from core.app.access import is_loopback

__all__ = ["Reach", "ClassAddress", "class_address", "network_address"]

EVERY_INTERFACE = ("", "0.0.0.0", "::")


class Reach(StrEnum):
    """Whether phones can open the link, and why (each has its line in the locales: gate.class_reach_*)."""
    AS_OPENED = "as_opened"          # the teacher's own address for the studio, which is not this computer's own
    NETWORK = "network"              # this computer's network address, in place of the teacher's localhost
    THIS_COMPUTER = "this_computer"  # the server listens on this computer only: no phone reaches it
    NO_NETWORK = "no_network"        # the server listens everywhere, but this computer has no network address


@dataclass(frozen=True)
class ClassAddress:
    base: str     # scheme://host:port of the link
    reach: Reach

    @property
    def phones_can_open(self) -> bool:
        return self.reach in (Reach.AS_OPENED, Reach.NETWORK)


def network_address() -> str | None:
    """This computer's address on its network: the source address of its route outwards (a UDP socket's connect
    sends nothing). None without a route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): only the route is looked up
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if is_loopback(address) or address == "0.0.0.0" else address


def class_address(browser_url: str, listen_address: str | None,
                  find_network_address: Callable[[], str | None] = network_address) -> ClassAddress:
    """browser_url: where the teacher's browser opened the studio; listen_address: the server's server.address."""
    parts = urlsplit(browser_url)
    host = parts.hostname or "localhost"
    if not is_loopback(host):
        return ClassAddress(f"{parts.scheme}://{parts.netloc}", Reach.AS_OPENED)
    here = f"{parts.scheme}://{parts.netloc}"
    listen = (listen_address or "").strip()
    if listen not in EVERY_INTERFACE:
        if is_loopback(listen):
            return ClassAddress(here, Reach.THIS_COMPUTER)
        return ClassAddress(_with_host(parts.scheme, listen, parts.port), Reach.NETWORK)
    found = find_network_address()
    if found is None:
        return ClassAddress(here, Reach.NO_NETWORK)
    return ClassAddress(_with_host(parts.scheme, found, parts.port), Reach.NETWORK)


def _with_host(scheme: str, host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port else "")
