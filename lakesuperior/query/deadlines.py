"""Time limits of queries: a deadline checked as work goes, and a watchdog backstop.

A ``Deadline`` is checked by the query view at every store access and between
batches of streamed or joined rows. For work that never touches the store
(rdflib's in-memory joins, sorting), ``limited()`` runs a watchdog thread that
interrupts the calling thread shortly after the deadline with an asynchronous
exception, turned into the same ``QueryTimeoutError``. Only a single long C call
that holds the GIL (a pathological regular expression) can outlast it.
"""
from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Any

from lakesuperior.exceptions import QueryTimeoutError

__all__ = ["CHECK_EVERY", "Deadline", "limited"]

CHECK_EVERY = 1024              # rows or triples handed out between two deadline checks
_WATCHDOG_REPEAT = 0.05         # seconds between two interruptions of a stuck query


class Deadline:
    """The end of a call's time: ``check()`` raises ``QueryTimeoutError`` past it."""

    __slots__ = ("at", "limit")

    def __init__(self, limit: float | None):
        self.limit = limit
        self.at = time.monotonic() + limit if limit is not None else None

    def check(self) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise self.error()

    def error(self) -> QueryTimeoutError:
        return QueryTimeoutError(
            f"The query ran over the time limit of {self.limit:g} s and was stopped; "
            "narrow it (more specific patterns, LIMIT) or ask for a longer query_timeout")


class _Interrupted(BaseException):
    """Raised asynchronously in a query's thread by its watchdog (a BaseException:
    ``except Exception`` in rdflib cannot swallow it)."""


def _async_raise(thread_id: int, exc: type[BaseException] | None) -> None:
    """Schedule ``exc`` in thread ``thread_id`` (None: cancel a scheduled one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)


class _Watchdog:
    """Interrupts the thread that made it, ``after`` seconds on, until stopped."""

    def __init__(self, after: float):
        self._after = after
        self._target = threading.get_ident()
        self._lock = threading.Lock()
        self._armed = True
        self._fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lsup-query-watchdog",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        wait = self._after
        while not self._done.wait(wait):
            with self._lock:
                if not self._armed:
                    return
                self._fired = True
                _async_raise(self._target, _Interrupted)
            wait = _WATCHDOG_REPEAT   # again, in case a bare ``except:`` ate it

    def stop(self) -> None:
        """Disarm; cancel an interruption scheduled but not yet delivered; wait for
        the watchdog thread to end. Safe against one delivered while stopping."""
        while True:
            try:
                with self._lock:
                    self._armed = False
                    if self._fired:
                        _async_raise(self._target, None)
                self._done.set()
                # Ended, its Thread object holds no cycle: it is freed here, when the
                # caller drops it, not by a later garbage collection in the middle of
                # another query, where that query's interruption could land in the
                # weakref callback of threading's bookkeeping and be lost.
                self._thread.join()
                return
            except _Interrupted:
                continue


def limited(deadline: Deadline, work: Callable[[], Any]) -> Any:
    """Run ``work()`` under ``deadline``, with the watchdog as a backstop."""
    if deadline.limit is None:
        return work()
    dog = _Watchdog(deadline.limit + min(1.0, max(0.05, deadline.limit / 10)))
    dog.start()
    try:
        try:
            return work()
        finally:
            dog.stop()
    except _Interrupted:
        pass
    # Raised outside the handler: the interruption (and its traceback) is not kept
    # as the context of the error.
    raise deadline.error()
