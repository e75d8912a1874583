"""Several targets at once: ``once`` (catch up and return) and ``follow`` (a daemon).

Each target runs on its own thread with its own checkpoint, lock and backoff: a
target that is down or refuses a change is retried (0.5 s doubling to 30 s)
while the others keep going, and its error is recorded for ``sync status``.
A target whose feed position is older than the retention (``FeedGapError``) is
not retried: nothing is skipped silently, it waits for ``--reindex``. A target
that was never filled is filled first (a reindex).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lakesuperior.exceptions import FeedGapError, LakesuperiorError, ReplicaError
from lakesuperior.replicas.replica import ReindexReport, Replica

log = logging.getLogger(__name__)

IDLE_POLL = 0.2          # seconds between looks at a drained feed
MIN_BACKOFF = 0.5
MAX_BACKOFF = 30.0
#: Attempts ``once`` makes on a target that fails before giving up on it.
ONCE_ATTEMPTS = 3


@dataclass
class Outcome:
    """What a run did for one target."""

    url: str
    events: int = 0
    reindex: ReindexReport | None = None
    error: str = ""
    done: bool = False


@dataclass
class Runner:
    """Runs ``replicas`` (see the module doc); ``reindex``: rebuild each first."""

    replicas: Sequence[Replica]
    reindex: bool = False
    max_backoff: float = MAX_BACKOFF
    min_backoff: float = MIN_BACKOFF
    notify: Callable[[str], None] = log.info
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def once(self) -> dict[str, Outcome]:
        """Bring every target up to the feed's end (a bounded number of attempts on
        a failing one), concurrently; return what happened to each."""
        return self._run(threading.Event(), follow=False)

    def follow(self, stop: threading.Event) -> dict[str, Outcome]:
        """Keep every target in step until ``stop`` is set."""
        return self._run(stop, follow=True)

    def _run(self, stop: threading.Event, *, follow: bool) -> dict[str, Outcome]:
        self.outcomes = {r.url: Outcome(r.url) for r in self.replicas}
        threads = [threading.Thread(target=self._one, args=(r, stop, follow),
                                    name=f"lsup-sync-{i}", daemon=True)
                   for i, r in enumerate(self.replicas)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
        except BaseException:            # Ctrl-C: the threads stop before the store closes
            stop.set()
            for t in threads:
                t.join()
            raise
        return self.outcomes

    def _one(self, replica: Replica, stop: threading.Event, follow: bool) -> None:
        out = self.outcomes[replica.url]
        if not replica.lock.acquire():
            out.error = (f"{replica.url} is being synced by another process "
                         "(lsup-admin sync): not started")
            self.notify(out.error)
            return
        try:
            self._loop(replica, out, stop, follow)
        finally:
            replica.lock.release()
            replica.target.close()

    def _loop(self, replica: Replica, out: Outcome, stop: threading.Event,
              follow: bool) -> None:
        delay, attempts = self.min_backoff, 0
        reindex = self.reindex
        mismatch = None if reindex else replica.filter_mismatch()
        if mismatch:
            out.error = mismatch
            self.notify(mismatch)
            return
        while not stop.is_set():
            try:
                why = None if reindex else replica.needs_reindex()
                if reindex or why:
                    if why and not attempts:
                        self.notify(f"Filling {replica.url} from the current state: {why}")
                    out.reindex = replica.reindex(stop=stop)
                    if not out.reindex.complete:
                        return
                    reindex = False
                n = replica.catch_up_once()
                out.events += n
                out.error = ""
                if n == 0:
                    if not follow:
                        out.done = True
                        return
                    stop.wait(IDLE_POLL)
                delay, attempts = self.min_backoff, 0
            except FeedGapError as e:
                out.error = str(e)
                replica.failed(out.error)
                self.notify(out.error)
                return
            except ReplicaError as e:
                attempts += 1
                out.error = str(e)
                replica.failed(out.error)
                self.notify(f"{e} (retrying in {delay:g} s)" if follow or
                            attempts < ONCE_ATTEMPTS else str(e))
                if not follow and attempts >= ONCE_ATTEMPTS:
                    return
                stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)
            except LakesuperiorError as e:      # the store: busy, closed, a bad checkpoint
                out.error = f"{replica.url}: {e}"
                self.notify(out.error)
                if not follow:
                    return
                stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)
