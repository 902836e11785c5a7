"""Separate "hosts" for the multi-host tests: Linux network namespaces, each with its own network stack and one
address on a private /24, joined by a bridge inside a hub namespace (nothing is added to the machine's own
network but one veth into that hub, so that the test process itself can reach the hosts' addresses).

A process started on a host may have folders hidden from it: a mount namespace of its own with an empty tmpfs
over each (so a test passes only if nothing reads, say, the first app server's store folder).

Needs root (CI runs as root); elsewhere the tests skip with the reason, or fail with STUDIO_REQUIRE_REAL_FAULTS.
"""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.postgres import skip_or_fail
import contextlib

__all__ = ["Hosts"]

_made = itertools.count()
HIDE = ('while [ "$1" != "--" ]; do mount -t tmpfs -o size=1m,mode=0755 tmpfs "$1" || exit 97; shift; done; '
        'shift; exec "$@"')


def _ip(*args: str) -> None:
    out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {out.stderr.strip()}")


class Hosts:
    """hosts.add("db") -> its address; hosts.popen("db", argv, hide=[...]) runs argv there."""

    def __init__(self):
        if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None:
            skip_or_fail("network namespaces need root and iproute2 (ip netns) with util-linux (unshare)")
        serial = os.getpid() * 8 + next(_made)  # several sets of hosts in one test process, each its own
        self.tag = f"{serial % 65536:04x}"
        self.subnet = f"10.231.{20 + serial % 200}"
        self.hub = f"st{self.tag}hub"
        self.names: dict[str, str] = {}
        self.addresses: dict[str, str] = {}
        self.links: list[str] = []
        try:
            _ip("netns", "add", self.hub)
        except RuntimeError as e:
            skip_or_fail(f"cannot create a network namespace here ({e})")
        _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.hub, "link", "set", "br0", "up")
        self._join_this_machine()

    def _link(self, index: int) -> tuple[str, str]:
        return f"v{self.tag}{index}a", f"v{self.tag}{index}b"  # 15 characters at most

    def _join_this_machine(self) -> None:
        mine, theirs = self._link(0)
        _ip("link", "add", mine, "type", "veth", "peer", "name", theirs)
        self.links.append(mine)
        _ip("link", "set", theirs, "netns", self.hub)
        _ip("-n", self.hub, "link", "set", theirs, "master", "br0", "up")
        _ip("addr", "add", f"{self.subnet}.254/24", "dev", mine)
        _ip("link", "set", mine, "up")

    def add(self, name: str) -> str:
        """A new host; its address."""
        index = len(self.names) + 1
        ns, (inside, hub_end) = f"st{self.tag}{name}"[:15], self._link(index)
        _ip("netns", "add", ns)
        _ip("link", "add", inside, "type", "veth", "peer", "name", hub_end)
        _ip("link", "set", hub_end, "netns", self.hub)
        _ip("-n", self.hub, "link", "set", hub_end, "master", "br0", "up")
        _ip("link", "set", inside, "netns", ns)
        address = f"{self.subnet}.{index}"
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", inside)
        _ip("-n", ns, "link", "set", inside, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        self.names[name], self.addresses[name] = ns, address
        return address

    def command(self, name: str, argv: list[str], hide: tuple[Path, ...] = ()) -> list[str]:
        """argv as run on host `name`, with the folders `hide` empty there."""
        wrapped = ["ip", "netns", "exec", self.names[name]]
        if hide:
            wrapped += ["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDE, "sh",
                        *map(str, hide), "--"]
        return wrapped + list(argv)

    def popen(self, name: str, argv: list[str], hide: tuple[Path, ...] = (), log: Path | None = None,
              env: dict | None = None, **kwargs) -> subprocess.Popen:
        with open(log or os.devnull, "ab") as out:  # the child keeps its own copy of the file
            return subprocess.Popen(self.command(name, argv, hide), stdout=out, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True, **kwargs)

    def run(self, name: str, argv: list[str], hide: tuple[Path, ...] = (), env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(name, argv, hide), capture_output=True, text=True, env=env,
                              timeout=timeout)

    def close(self) -> None:
        for ns in [*self.names.values(), self.hub]:
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for link in self.links:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
