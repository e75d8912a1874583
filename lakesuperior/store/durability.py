"""Group commit: one fsync made durable for every commit that came before it.

With ``store.sync`` on, the main environment is opened with LMDB's
``metasync=False``: a commit flushes its data pages (one fsync, inside the write
lock) but not the meta page that makes it the newest state. A write is made
durable after the write lock is released, before it is acknowledged, by a sync
of the whole environment (``env.sync(True)``). Syncs are coalesced: a writer
takes a ticket after its commit, and waits until a sync that *started* after
its ticket has finished. When one is already running that started too early,
the writer waits for it to end, and the next sync, started by the first writer
to find none running, covers every ticket handed out by then. An fsync of the
data file covers every commit finished before it started, whichever process
made it, so a ticket is a moment, not a particular commit.
"""
from __future__ import annotations

import threading
from collections.abc import Callable


class DurabilityGate:
    """Coalesces the syncs of one process (see the module).

    ``issued`` is the last ticket handed out, ``durable`` the last ticket a
    finished sync covers, ``syncs`` how many syncs ran (for tests and stats).
    """

    def __init__(self, sync: Callable[[], None]):
        self._sync = sync
        self._cond = threading.Condition()
        self._running = False
        self.issued = 0
        self.durable = 0
        self.syncs = 0

    def ticket(self) -> int:
        """A ticket for everything committed before this call."""
        with self._cond:
            self.issued += 1
            return self.issued

    def wait(self, ticket: int) -> None:
        """Return once a sync started after ``ticket`` was issued has finished
        (running one, if none is under way). A failed sync raises its error in
        the writer that ran it; the writers it would have covered try again."""
        with self._cond:
            while self.durable < ticket:
                if self._running:
                    self._cond.wait()
                    continue
                self._running = True
                covers = self.issued
                break
            else:
                return
        try:
            self._sync()
        except BaseException:
            with self._cond:
                self._running = False
                self._cond.notify_all()
            raise
        with self._cond:
            self._running = False
            self.syncs += 1
            self.durable = max(self.durable, covers)
            self._cond.notify_all()

    def sync(self) -> None:
        """Make everything committed before this call durable."""
        self.wait(self.ticket())
