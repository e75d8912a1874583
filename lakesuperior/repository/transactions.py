"""The write transactions of a ``Repository``: the state it shares with its
``as_user`` copies, ``transaction()`` blocks, and the group commit of its writes.

A write made outside any transaction (one ``Repository`` call, or
``Repository.transact``) is a callable run as one member of a group
(``store.group.WriteGroups``): in its own savepoint of a write transaction
that several threads' writes share, under one commit and one sync. While it
runs, the thread running it (the group's leader) *owns* the transaction: the
repository calls the write makes join it (``owned()``), and record their
change events in the member's own ``ChangeSet``, written to the outbox at the
end of the member, inside its savepoint: a member that fails leaves no event.
A ``transaction()`` block is a group of one (``WriteGroups.solo``), run by the
caller's thread holding the write lock.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from lakesuperior.model import events
from lakesuperior.store.group import WriteGroups
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.writes import WriteTxn

__all__ = ["Transactions"]

_T = TypeVar("_T")


class Transactions:
    """The transaction state a repository shares with its ``as_user`` copies: the
    group commit (its write lock), the open write transaction and its owner thread,
    the first error of a call inside it, its change events and clock, its mark,
    and the open read snapshot of each thread.

    ``clock``: the function giving the current time (aware, UTC) that writes
    record, unless a ``clock(now)`` block sets it (``time()``)."""

    __slots__ = ("groups", "txn", "owner", "error", "reads", "events", "now", "mark",
                 "clock", "_retention_s", "_publishing")

    def __init__(self, store: QuadStore, *, retention_s: float, publishing: bool,
                 clock: Callable[[], datetime]):
        self.groups = WriteGroups(store)
        self.clock = clock
        self.txn: WriteTxn | None = None
        self.owner: int | None = None
        self.error: BaseException | None = None
        self.reads: dict[int, Any] = {}
        self.events = events.ChangeSet()   # the changes of the running write
        self.now: datetime | None = None   # the time its writes record (``clock``)
        #: The state of the open transaction: a new object after each of its writes
        #: (``written``), so that what was read under one mark is known current.
        self.mark: object | None = None
        self._retention_s = retention_s
        self._publishing = publishing

    def owned(self) -> bool:
        """Whether the calling thread runs inside the open write transaction."""
        return self.txn is not None and self.owner == threading.get_ident()

    def current(self) -> WriteTxn:
        """The write transaction this thread owns (``RuntimeError`` if none)."""
        if self.txn is None or not self.owned():
            raise RuntimeError("No write transaction of this thread is open")
        return self.txn

    def written(self) -> None:
        """A write of the open transaction ran: what was read before it is not current."""
        self.mark = object()

    def failed(self, error: BaseException) -> None:
        """A call inside the open transaction raised: the write is rolled back at
        its end, with this error, even if the caller caught it."""
        if self.error is None:
            self.error = error

    def run(self, work: Callable[[], _T]) -> _T:
        """``work()`` as one write of a group; its result once committed and
        durable, or its exception (nothing of it written)."""
        return self.groups.run(lambda txn: self._member(txn, work))

    @contextmanager
    def block(self) -> Iterator[None]:
        """The calling thread's own write transaction for the block (a group of one)."""
        with self.groups.solo() as txn:
            self._begin(txn)
            try:
                yield
                self._finish(txn)
            finally:
                self._reset()

    def time(self) -> datetime:
        """The time a write made now records: the ``pinned`` block's, else the clock's."""
        return self.now or self.clock()

    @contextmanager
    def pinned(self, now: datetime) -> Iterator[None]:
        """The writes of the block record ``now`` as their time."""
        before, self.now = self.now, now
        try:
            yield
        finally:
            self.now = before

    def _member(self, txn: WriteTxn, work: Callable[[], _T]) -> _T:
        self._begin(txn)
        try:
            out = work()
            self._finish(txn)
            return out
        finally:
            self._reset()

    def _begin(self, txn: WriteTxn) -> None:
        self._reset()
        self.txn = txn
        self.owner = threading.get_ident()
        self.mark = object()

    def _finish(self, txn: WriteTxn) -> None:
        """The end of a write: its first error raised, else its events into the
        outbox, in its transaction (or savepoint), just before it is kept."""
        if self.error is not None:
            raise self.error
        events.write_outbox(txn, self.events, retention_s=self._retention_s,
                            publishing=self._publishing, now=self.time())

    def _reset(self) -> None:
        self.txn = None
        self.owner = None
        self.error = None
        self.events = events.ChangeSet()
        self.now = None
        self.mark = None
