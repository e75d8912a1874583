"""Password guessing slowed down: wrong passwords counted, with backoff, and the
verifications done at once bounded.

``GuessingGuard`` (one per authenticating app, made from ``auth.guessing.*``)
counts wrong passwords per user name and per client address. From the
``free_failures``-th failure on, each further one starts a backoff of ``backoff``
seconds doubled per failure past it, at most ``max_backoff``; a count is
forgotten ``2 * max_backoff`` seconds after its last failure. During a backoff:

* an address in backoff has its credentials refused, whoever they name
  (``TooManyFailuresError``, 429), without verifying anything;
* a user name in backoff is refused only from addresses that sent a wrong
  password lately; an address with no failure gets its password verified, so
  the right password from another address than the guesser's is never locked
  out, and a guesser spread over many addresses gets one try per address.

A success clears the user name's count (a guesser cannot succeed, so cannot
clear it); an address's count is never cleared by a success, or a guesser with
an account of its own could clear it between guesses. Each table keeps at most
``tracked`` entries, the least recently used dropped first.

Verifying an argon2 hash is slow and memory-hard by design; ``verifying()``
lets at most ``max_verifying`` run at once, and a request that waits more than
``verify_wait`` seconds for its turn gets ``VerificationBusyError`` (503), so a
flood of guesses cannot queue up unbounded work behind the other requests.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from lakesuperior.config import Config
from lakesuperior.exceptions import TooManyFailuresError, VerificationBusyError

__all__ = ["GuessingGuard"]


@dataclass
class _Count:
    failures: int = 0
    last: float = 0.0     #: time of the last failure
    until: float = 0.0    #: end of the backoff


class _Table:
    """Key -> ``_Count``, at most ``size`` entries (least recently used dropped)."""

    def __init__(self, size: int):
        self.size = size
        self.counts: OrderedDict[str, _Count] = OrderedDict()

    def get(self, key: str, now: float, forget: float) -> _Count | None:
        count = self.counts.get(key)
        if count is not None and now - count.last >= forget:
            del self.counts[key]
            return None
        if count is not None:
            self.counts.move_to_end(key)
        return count

    def add(self, key: str, count: _Count) -> None:
        self.counts[key] = count
        self.counts.move_to_end(key)
        while len(self.counts) > self.size:
            self.counts.popitem(last=False)


class GuessingGuard:
    """The failure counts and the verification slots of one app (see the module doc).
    Thread-safe."""

    def __init__(self, *, free_failures: int, backoff: float, max_backoff: float,
                 tracked: int, max_verifying: int, verify_wait: float,
                 clock: Callable[[], float] = time.monotonic):
        self.free_failures = free_failures
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.verify_wait = verify_wait
        self.clock = clock
        self._users = _Table(tracked)
        self._addresses = _Table(tracked)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_verifying)

    @classmethod
    def of(cls, config: Config) -> GuessingGuard:
        return cls(free_failures=config.auth_guessing_free_failures,
                   backoff=config.auth_guessing_backoff,
                   max_backoff=config.auth_guessing_max_backoff,
                   tracked=config.auth_guessing_tracked,
                   max_verifying=config.auth_guessing_max_verifying,
                   verify_wait=config.auth_guessing_verify_wait)

    def check(self, user: str, address: str) -> None:
        """``TooManyFailuresError`` if credentials naming ``user`` from ``address``
        must wait."""
        now = self.clock()
        forget = 2 * self.max_backoff
        with self._lock:
            by_address = self._addresses.get(address, now, forget)
            by_user = self._users.get(user, now, forget)
        if by_address is not None and by_address.until > now:
            raise TooManyFailuresError(
                "Too many wrong passwords from this address: credentials are not checked "
                f"for {_seconds(by_address.until - now)}", by_address.until - now)
        if by_user is not None and by_user.until > now and by_address is not None:
            raise TooManyFailuresError(
                "Too many wrong passwords for this user name, some from this address: "
                f"credentials are not checked for {_seconds(by_user.until - now)}",
                by_user.until - now)

    def failed(self, user: str, address: str) -> None:
        """Count a wrong password for ``user`` from ``address``."""
        now = self.clock()
        forget = 2 * self.max_backoff
        with self._lock:
            for table, key in ((self._users, user), (self._addresses, address)):
                count = table.get(key, now, forget) or _Count()
                count.failures += 1
                count.last = now
                past = count.failures - self.free_failures
                if past >= 0:
                    count.until = now + min(self.backoff * 2.0 ** min(past, 64),
                                            self.max_backoff)
                table.add(key, count)

    def succeeded(self, user: str) -> None:
        """``user`` gave its password: its count goes."""
        with self._lock:
            self._users.counts.pop(user, None)

    @contextmanager
    def verifying(self) -> Iterator[None]:
        """Hold one of the verification slots (``VerificationBusyError`` if none
        is free within ``verify_wait`` seconds)."""
        if not self._slots.acquire(timeout=self.verify_wait):
            raise VerificationBusyError(
                "Too many passwords are being checked at once: try again shortly",
                self.verify_wait)
        try:
            yield
        finally:
            self._slots.release()

    def tracked(self) -> tuple[int, int]:
        """(user names, addresses) with a count."""
        with self._lock:
            return len(self._users.counts), len(self._addresses.counts)


def _seconds(delay: float) -> str:
    n = max(1, int(-(-delay // 1)))
    return f"{n} second{'s' if n != 1 else ''}"
