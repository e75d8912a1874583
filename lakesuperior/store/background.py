"""The background indexer: keeps the union-graph indices a moment behind the log.

One per store, however many processes open it: each process may run an
``IndexerThread``, and only the holder of the lock file ``indexer.lock`` in the
store directory indexes (``fcntl.flock``: a process that dies, a gunicorn worker
included, releases it, and another thread takes over within ``LOCK_POLL``).
The leader applies the log in batches (``QuadStore.index()``, ``store.index_batch``
entries per index transaction, and at most ``indexer.MAX_BATCH_TRIPLES`` triples)
as long as another batch as large waits, then looks again every ``IDLE_POLL``: during a
sustained ingest the index trails the last commit by about one batch. A batch
is one index transaction, so killing the indexer at any moment loses nothing:
the next leader resumes from the last batch committed. Readers never wait for
it (``reads.pyx`` answers the tail from the graphs). By default the thread runs
in a child process of its own (``indexer_process``), on a lock it inherits.
"""
from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from typing import IO, Any

from lakesuperior.exceptions import LakesuperiorError
from lakesuperior.store import private
from lakesuperior.store.quadstore import QuadStore

log = logging.getLogger(__name__)

LOCK_NAME = "indexer.lock"
IDLE_POLL = 0.1          # seconds between looks at a caught-up log
LOCK_POLL = 1.0          # seconds between attempts to become the indexer
MAX_BACKOFF = 30.0       # seconds, after repeated store errors (e.g. a full disk)


class LeaderLock:
    """A lock file that makes one thread of one process the leader of a background
    task (the indexer here, the events publisher in ``messaging``): a non-blocking
    ``flock``, released when its holder closes it or dies."""

    def __init__(self, directory: str, name: str):
        self.path = os.path.join(directory, name)
        self._fh: IO[bytes] | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    @property
    def file(self) -> IO[bytes] | None:
        """The locked file while held (``indexer_process`` hands it to its child)."""
        return self._fh

    def acquire(self) -> bool:
        """Take the lock if no other process (or thread) holds it."""
        if self._fh is not None:
            return True
        fh = os.fdopen(private.open_file(self.path, os.O_WRONLY | os.O_APPEND), "ab")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def release(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()


class IndexerLock(LeaderLock):
    """The store directory's indexer lock."""

    def __init__(self, store_dir: str):
        super().__init__(store_dir, LOCK_NAME)


class HeldLock(LeaderLock):
    """A lock file already locked, on an inherited descriptor (the indexer
    process's): held until released or the process ends."""

    def __init__(self, fd: int):
        self.path = f"<fd {fd}>"
        self._fh = os.fdopen(fd, "ab")

    def acquire(self) -> bool:
        return self._fh is not None


class IndexerThread:
    """The background indexer of ``store`` (a ``QuadStore``) on a daemon thread."""

    def __init__(self, store: QuadStore, *, idle_poll: float = IDLE_POLL,
                 lock_poll: float = LOCK_POLL, after_batch: Callable[[], Any] | None = None,
                 lock: LeaderLock | None = None):
        self.store = store
        self.after_batch = after_batch    #: called after each batch applied
        self.idle_poll = idle_poll
        self.lock_poll = lock_poll
        self.lock = lock if lock is not None else IndexerLock(store.path)
        self.applied = 0                  #: log entries this thread applied
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="lsup-indexer", daemon=True)

    @property
    def leader(self) -> bool:
        """Whether this thread holds the lock (is the store's indexer)."""
        return self.lock.held

    def start(self) -> IndexerThread:
        self.thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch under way (it is committed) and release the lock."""
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _run(self) -> None:
        stop = self.stop_event
        delay = self.idle_poll
        try:
            while not stop.is_set():
                if not self.lock.acquire():
                    stop.wait(self.lock_poll)
                    continue
                batch = self.store.index_batch
                try:
                    n = self.store.index(1)
                    # a batch cut at MAX_BATCH_TRIPLES is short: go on while
                    # another as large waits
                    more = n >= batch or (n > 0 and self.store.pending() >= n)
                except LakesuperiorError as e:      # closed, full disk, backend
                    log.warning("The background indexer could not apply the log: %s", e)
                    delay = min(max(delay * 2, 0.5), MAX_BACKOFF)
                    stop.wait(delay)
                    continue
                delay = self.idle_poll
                self.applied += n
                if n and self.after_batch is not None:
                    self.after_batch()
                if not more:                        # caught up: look again soon
                    stop.wait(self.idle_poll)
        finally:
            self.lock.release()
