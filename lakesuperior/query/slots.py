"""How many queries one agent runs at once: a bound per process.

A query holds a request thread until it ends (at most ``query_timeout`` and a
match's budget later: ``deadlines``, ``regex``); a client that sends many at
once could hold every thread of a worker. ``QuerySlots`` lets each key (an
agent, or an anonymous client's address: the endpoint decides) run at most
``per_agent`` queries at once in this process; one more is refused at once with
``TooManyQueriesError``, before any work. It holds one counter per key with a
query running, so its size is bounded by the threads that run queries.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lakesuperior.exceptions import TooManyQueriesError

__all__ = ["QuerySlots", "RETRY_AFTER"]

#: Seconds a refused client is told to wait before trying again.
RETRY_AFTER = 1


class QuerySlots:
    """At most ``per_agent`` queries at once per key (0: no bound)."""

    def __init__(self, per_agent: int):
        self.per_agent = per_agent
        self._lock = threading.Lock()
        self._running: dict[str, int] = {}

    @contextmanager
    def slot(self, key: str) -> Iterator[None]:
        """Hold one of ``key``'s slots for the block; ``TooManyQueriesError`` if
        they are all taken."""
        if self.per_agent <= 0:
            yield
            return
        with self._lock:
            running = self._running.get(key, 0)
            if running >= self.per_agent:
                raise TooManyQueriesError(
                    f"Too many queries at once: this client already runs {running}, the "
                    f"most allowed (query_max_per_agent); send the next when one has "
                    f"ended", RETRY_AFTER)
            self._running[key] = running + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._running[key] - 1
                if left:
                    self._running[key] = left
                else:
                    del self._running[key]

    def running(self, key: str) -> int:
        """Queries ``key`` runs now."""
        with self._lock:
            return self._running.get(key, 0)
