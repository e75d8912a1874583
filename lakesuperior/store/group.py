"""Group commit: the writes of several threads of one process in one write
transaction, under one commit and one durability sync.

A ``WriteGroups`` belongs to the owner of a store's writes (the ``Repository``).
A write is a callable given the ``WriteTxn``. The first thread to call ``run``
when no group is collecting becomes the **leader**: it takes the write lock,
begins the LMDB write transaction and runs its own write in a savepoint
(``journal.pyx``), then the writes queued by other threads meanwhile, each in
its own savepoint, in the leader's thread under the caller's
``contextvars.copy_context()`` (so that context-bound state, Flask's
``request`` for one, is the caller's), until none waits or the group has
``max_members``; then it commits once, releases the lock, and makes the commit
durable (``StoreEnv.make_durable``: with ``store.sync`` on, one sync). Only
then is each member woken with its result or its own exception, re-raised in
its own thread. A write that raises has its savepoint rolled back, and the
group goes on without it (such a member is woken at once: it waits for no
commit). Every LMDB call of a group is made by the leader's thread, as LMDB's
write lock requires; a lone writer runs in its own thread, with no hand-over.

When the group is full, or its leader fails, the next queued member leads
the rest. A failure that ends the transaction (the commit's: a full disk, a
backend error) is every remaining member's: nothing of the group is kept. If
the leader's sync fails, each member makes the commit durable again in its own
thread (the sync's error is then its own).

``solo()`` is the write transaction of one thread for a block of its own code
(``Repository.transaction()``): the same lock, no queue.

Observers (``observe_waits``) are told, for every write, how long it waited for
the write lock: from the call until its work began (for a member of a group,
the time queued behind the writes before it). They run under the lock: they
must be quick, and what they raise is ignored.
"""
from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.writes import WriteTxn

#: Most writes one group commits (a bound on a member's wait for the others).
GROUP_MAX = 16

_T = TypeVar("_T")


class _Member(Generic[_T]):
    """One write of a group: its callable, the caller's context, its outcome."""

    __slots__ = ("work", "context", "wake", "lead", "result", "error", "durable", "woken",
                 "queued")

    def __init__(self, work: Callable[[Any], _T]):
        self.queued = time.perf_counter()
        self.work = work
        self.context = contextvars.copy_context()
        self.wake = threading.Lock()      # held until the leader wakes the member
        self.wake.acquire()
        self.lead = False                 # woken to lead the writes queued after it
        self.result: _T | None = None
        self.error: BaseException | None = None
        self.durable = False
        self.woken = False

    def release(self) -> None:
        if not self.woken:
            self.woken = True
            self.wake.release()


class WriteGroups:
    """The group commit of one process's writers on one store (module docstring).

    ``lock`` is the write lock (re-entrant); ``commits`` counts the write
    transactions committed, ``writes`` the group members among them that were
    kept; ``waiting`` is how many writes are queued for the leader.
    """

    def __init__(self, store: QuadStore, max_members: int = GROUP_MAX):
        if isinstance(max_members, bool) or not isinstance(max_members, int) or max_members < 1:
            raise ValueError(f"max_members must be a positive int, not {max_members!r}")
        self.store = store
        self.max_members = max_members
        self.lock = threading.RLock()
        self._queue: deque[_Member[Any]] = deque()
        self._qlock = threading.Lock()
        self._collecting = False     # a leader will take what is queued
        self.commits = 0
        self.writes = 0
        self._observers: list[Callable[[float], None]] = []

    def observe_waits(self, observer: Callable[[float], None]) -> None:
        """Call ``observer(seconds)`` with each write's wait for the write lock."""
        self._observers.append(observer)

    def forget_observer(self, observer: Callable[[float], None]) -> None:
        """Stop calling ``observer`` (given to ``observe_waits``)."""
        if observer in self._observers:
            self._observers.remove(observer)

    def _waited(self, since: float) -> None:
        seconds = time.perf_counter() - since
        for observer in list(self._observers):
            try:
                observer(seconds)
            except Exception:     # a figure lost, never a write
                pass

    @property
    def waiting(self) -> int:
        with self._qlock:
            return len(self._queue)

    def run(self, work: Callable[[Any], _T]) -> _T:
        """Run ``work(txn)`` as one write of a group, in its own savepoint of the
        group's write transaction; return its result once the group is committed
        and durable, or raise its exception (its writes undone)."""
        member: _Member[_T] = _Member(work)
        with self._qlock:
            follow = self._collecting
            if follow:
                self._queue.append(member)
            else:
                self._collecting = True
        if follow:
            member.wake.acquire()
            if not member.lead:
                return self._outcome(member)
        return self._lead(member)

    @contextmanager
    def solo(self) -> Iterator[Any]:
        """The write transaction of the calling thread alone, for a block of code:
        committed when the block ends (aborted if it raises), then made durable."""
        since = time.perf_counter()
        with self.lock:
            self._waited(since)
            with self.store.write(durable=False) as txn:
                yield txn
            self.commits += 1
        self.store.make_durable()

    # -- the leader ----------------------------------------------------------------------

    def _lead(self, first: _Member[_T]) -> _T:
        members: list[_Member[Any]] = [first]
        collecting = True
        committed = False
        kept = 0
        try:
            with self.lock:
                txn = self.store.write(durable=False)
                try:
                    kept = self._member(txn, first, own=True)
                    while len(members) < self.max_members:
                        nxt = self._next()
                        if nxt is None:
                            collecting = False
                            break
                        members.append(nxt)
                        kept += self._member(txn, nxt)
                    if collecting:
                        self._pass_on()
                        collecting = False
                    txn.commit()
                except BaseException:
                    txn.abort()
                    raise
                committed = True
                self.commits += 1
                self.writes += kept
        except BaseException as e:
            for m in members:
                if m.error is None:
                    m.error = e
        finally:
            if collecting:
                self._pass_on()
        if committed and kept:
            try:
                self.store.make_durable()
            except BaseException:
                pass    # each member syncs again in its own thread: its error is its own
            else:
                for m in members:
                    m.durable = True
        for m in members[1:]:
            m.release()
        return self._outcome(first)

    def _member(self, txn: WriteTxn, m: _Member[Any], own: bool = False) -> int:
        """Run one write in its own savepoint; keep it (1), or undo it and wake its
        caller (0: a failed member waits for no commit)."""
        depth = txn.savepoint()
        self._waited(m.queued)
        try:
            m.result = m.work(txn) if own else m.context.run(m.work, txn)
        except BaseException as e:
            m.error = e
            if txn.depth < depth:
                raise          # the transaction ended under it: the group fails
            txn.rollback(depth)
        else:
            try:
                txn.release(depth)
                return 1
            except Exception as e:   # undone; the transaction goes on
                m.result = None
                m.error = e
        if not own:
            m.release()
        return 0

    def _next(self) -> _Member[Any] | None:
        """The next queued write; None (and the group stops collecting) if none."""
        with self._qlock:
            if self._queue:
                return self._queue.popleft()
            self._collecting = False
            return None

    def _pass_on(self) -> None:
        """Stop collecting: the next queued write leads those after it."""
        with self._qlock:
            if self._queue:
                nxt = self._queue.popleft()
                nxt.lead = True
                nxt.release()
            else:
                self._collecting = False

    def _outcome(self, m: _Member[_T]) -> _T:
        if m.error is not None:
            raise m.error
        if not m.durable:
            self.store.make_durable()
        return m.result  # type: ignore[return-value]
