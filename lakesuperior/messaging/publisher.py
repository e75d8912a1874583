"""The publisher: drains the change feed to the broker, in commit order.

One per repository: the process that holds the lock file ``publisher.lock`` in
the data directory publishes (``fcntl.flock``, so a process that dies, a
gunicorn worker included, releases it and another takes over within a second).
Each round reads the events after the last one acknowledged, sends them,
waits for the broker's receipts, and moves over the acknowledged prefix only.
The feed's stored ``published`` mark follows at most every half second while
events keep coming (a write of its own, so that publishing adds few commits to
a busy store) and at once when the feed is drained: at-least-once delivery (a
crash before the mark moved sends those events again; consumers de-duplicate
by event ``id``). Writes
never wait for the broker: with the broker down the feed grows, connection
attempts back off (0.5 s doubling to 30 s), and the backlog drains by itself
when the broker is back.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from itertools import islice
from typing import Any

from lakesuperior.config import Config
from lakesuperior.exceptions import BrokerError, LakesuperiorError
from lakesuperior.messaging.broker import BrokerConnection
from lakesuperior.repository import Repository
from lakesuperior.store.background import LeaderLock

log = logging.getLogger(__name__)

LOCK_NAME = "publisher.lock"
BATCH = 500
IDLE_POLL = 0.2          # seconds between looks at an empty feed
MARK_INTERVAL = 0.5      # seconds between moves of the stored mark while busy
LOCK_POLL = 1.0          # seconds between attempts to become the publisher
MIN_BACKOFF = 0.5
MAX_BACKOFF = 30.0


class PublisherLock(LeaderLock):
    """The data directory's publisher lock."""

    def __init__(self, data_dir: str):
        super().__init__(data_dir, LOCK_NAME)


@dataclass
class Status:
    """What the publisher last saw (for logs and tests)."""

    leader: bool = False
    broker: str = "not connected"
    sent: int = 0


class Publisher:
    """Drains ``repo``'s change feed to the broker of ``config`` (see the module)."""

    def __init__(self, repo: Repository, config: Config, *, batch: int = BATCH,
                 max_backoff: float = MAX_BACKOFF):
        self.repo = repo
        self.max_backoff = max_backoff
        self.broker = BrokerConnection(config)
        self.lock = PublisherLock(config.data_dir)
        self.batch = batch
        self.status = Status()
        self.position: int | None = None     # last seq acknowledged (None: read the mark)
        self._marked = 0
        self._marked_at = 0.0

    def drain_once(self) -> int:
        """Publish one batch after the last acknowledged event; return how many
        events the broker acknowledged (0: the feed is drained, and the stored
        mark is up to date). ``BrokerError`` when the broker is unusable."""
        if self.position is None:
            self.position = self._marked = self.repo.feed_state()["published"]
        pending = list(islice(self.repo.changes(self.position, batch=self.batch),
                              self.batch))
        if not pending:
            self.mark()
            return 0
        # A commit is synced before its writer returns, but another process may
        # have committed these events a moment ago: on disk before they leave.
        self.repo.make_durable()
        acked = self.broker.send(pending)
        self.position = pending[acked - 1].seq
        self.status.broker = "up"
        self.status.sent += acked
        if time.monotonic() - self._marked_at >= MARK_INTERVAL:
            self.mark()
        return acked

    def mark(self) -> None:
        """Store the ``published`` mark at the last acknowledged event."""
        if self.position is not None and self.position > self._marked:
            self.repo.mark_published(self.position)
            self._marked = self.position
        self._marked_at = time.monotonic()

    def run(self, stop: threading.Event) -> None:
        """Publish until ``stop`` is set: become the leader, then drain, backing off
        while the broker is down."""
        delay = MIN_BACKOFF
        try:
            while not stop.is_set():
                if not self.lock.held:
                    if not self.lock.acquire():
                        stop.wait(LOCK_POLL)
                        continue
                    self.position = None         # the last leader's mark
                self.status.leader = True
                try:
                    if self.drain_once() == 0:
                        stop.wait(IDLE_POLL)
                    delay = MIN_BACKOFF
                except BrokerError as e:
                    if self.status.broker != f"down: {e}":
                        log.warning("Events are kept in the change feed until the broker "
                                    "is back: %s", e)
                    self.status.broker = f"down: {e}"
                    self.broker.close()
                    stop.wait(delay)
                    delay = min(delay * 2, self.max_backoff)
                except LakesuperiorError as e:       # the store: closed, busy, full
                    log.warning("The publisher could not read the change feed: %s", e)
                    stop.wait(delay)
                    delay = min(delay * 2, self.max_backoff)
        finally:
            self.broker.close()
            try:
                self.mark()
            except LakesuperiorError as e:
                log.warning("The publisher could not store its mark: %s", e)
            self.lock.release()
            self.status.leader = False


class PublisherThread:
    """A ``Publisher`` on a daemon thread (one in each server worker: the lock
    makes exactly one of them publish)."""

    def __init__(self, repo: Repository, config: Config, **options: Any):
        self.publisher = Publisher(repo, config, **options)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.publisher.run, args=(self.stop_event,),
                                       name="lsup-publisher", daemon=True)

    def start(self) -> PublisherThread:
        self.thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self.thread.join(timeout)
