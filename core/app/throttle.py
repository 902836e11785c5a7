"""Wrong passwords slowed for everyone, not per session: one throttle per server process, shared by every
session's thread (Streamlit runs each session's script in a thread of one process).

- Per client address: FREE_FAILURES wrong passwords within WINDOW_S, then that address is locked out for
  LOCKOUT_S (attempts are refused without being checked, and say how long to wait).
- Across all addresses: checks run one at a time, and a wrong one holds the line for SPACING_S, so parallel
  guessing from many addresses (or forged forwarded headers) gets at most 1 / SPACING_S guesses per second.
The right password gets in as soon as its address is not locked out.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from collections.abc import Callable

__all__ = ["Throttle", "Verdict", "THROTTLE", "LOCKOUT_ENV"]

FREE_FAILURES = 5
WINDOW_S = 60.0
LOCKOUT_ENV = "STUDIO_LOCKOUT_S"  # default 60 s; tests shorten it
SPACING_S = 0.5


@dataclass(frozen=True)
class Verdict:
    granted: bool
    locked_for_s: float = 0.0  # > 0: this address is locked out for this long
    checked: bool = True       # False: refused unchecked (locked out): right or wrong, the password was not read


class Throttle:
    def __init__(self, free: int = FREE_FAILURES, window_s: float = WINDOW_S, lockout_s: float | None = None,
                 spacing_s: float = SPACING_S):
        self.free, self.window_s, self.spacing_s = free, window_s, spacing_s
        self.lockout_s = lockout_s if lockout_s is not None else float(os.environ.get(LOCKOUT_ENV) or 60.0)
        self._line = threading.Lock()   # one check at a time, across every session
        self._state = threading.Lock()  # guards the tables below
        self._failures: dict[str, deque] = {}
        self._locked_until: dict[str, float] = {}

    def attempt(self, address: str, check: Callable[[], bool]) -> Verdict:
        """Check a password (check() -> whether it is right) for a client address, under the throttle."""
        wait = self._locked(address)
        if wait > 0:
            return Verdict(False, wait, checked=False)
        with self._line:
            wait = self._locked(address)  # locked while this one waited in line
            if wait > 0:
                return Verdict(False, wait, checked=False)
            if check():
                return Verdict(True)
            self._fail(address)
            time.sleep(self.spacing_s)
        return Verdict(False, self._locked(address))

    def _locked(self, address: str) -> float:
        with self._state:
            return max(0.0, self._locked_until.get(address, 0.0) - time.monotonic())

    def _fail(self, address: str) -> None:
        now = time.monotonic()
        with self._state:
            recent = self._failures.setdefault(address, deque())
            recent.append(now)
            while recent and now - recent[0] > self.window_s:
                recent.popleft()
            if len(recent) >= self.free:
                self._locked_until[address] = now + self.lockout_s
                recent.clear()


THROTTLE = Throttle()  # the server's one throttle
