"""One target kept in step with the repository: catch up from the feed, reindex.

A round reads up to ``batch`` events after the target's checkpoint, takes each
changed resource once (however many events it had in the round), reads the
current graphs of those resources from one snapshot, has the target replace or
delete them, and only once the target acknowledged all of them moves the
checkpoint (a durable file write, ``state``) to the round's last event. A kill
anywhere in a round repeats it whole next time: replacing a graph with the
repository's current state twice is harmless, and since every round writes the
current state, the replica equals the repository once it has caught up.

A reindex takes the feed position first, then writes the graph of every live
resource (names listed from one snapshot, graphs read a batch at a time from one
snapshot each, the next batch read while the last two are on their way), deletes
the graphs under the repository's base that it no longer has (when the store's
query endpoint is known), and leaves the checkpoint at the position it started
at: what changed meanwhile comes from the feed after it.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from lakesuperior.auth.agents import Agent
from lakesuperior.exceptions import FeedGapError
from lakesuperior.messaging.status import lost_after
from lakesuperior.replicas import state as st
from lakesuperior.replicas.graphs import GraphWrite, Source, live_uids
from lakesuperior.replicas.targets import Sending, Target, named_graphs

log = logging.getLogger(__name__)

#: Resources read and sent per step of a reindex.
REINDEX_BATCH = 200
#: Steps of a reindex sent and not yet acknowledged, at most (the next one is read
#: meanwhile).
REINDEX_IN_FLIGHT = 2


def _drain(sending: deque[Sending]) -> None:
    """Wait for what is still on its way, its errors dropped (one is being raised or
    the reindex was stopped)."""
    while sending:
        try:
            sending.popleft().wait()
        except Exception:       # noqa: BLE001 - the error being raised is the one told
            pass


@dataclass
class ReindexReport:
    written: int = 0        #: graphs replaced
    stale_deleted: int = 0  #: graphs the repository no longer has, deleted
    stale_checked: bool = False
    complete: bool = False  #: False: stopped before the end (the target stays unfilled)


class Replica:
    """``target`` kept in step with ``repo`` (its checkpoint in the data directory)."""

    def __init__(self, repo: Any, target: Target, *, readable_by: str = "",
                 agent: Agent | None = None, batch: int = 500, query_url: str | None = None):
        self.repo = repo
        self.target = target
        self.data_dir: str = repo.config.data_dir
        self.readable_by = readable_by
        self.source = Source(repo, agent)
        self.batch = batch
        self.query_url = query_url
        self.lock = st.TargetLock(self.data_dir, target.url)
        self.state = st.load(self.data_dir, target.url) or st.TargetState(
            target.url, target.protocol, readable_by=readable_by)
        self.state.protocol = target.protocol     # the same store, written another way

    @property
    def url(self) -> str:
        return self.target.url

    def save(self) -> None:
        st.save(self.data_dir, self.state)

    def failed(self, message: str) -> None:
        """Record ``message`` as the target's last error (shown by ``sync status``)."""
        self.state.failed(message)
        self.save()

    # -- where the target stands -----------------------------------------------------

    def needs_reindex(self) -> str | None:
        """Why the target must be filled from the current state first (None: it need not)."""
        if not self.state.filled:
            return "it was never filled (or its last reindex did not finish)"
        return None

    def filter_mismatch(self) -> str | None:
        """Why the target cannot go on with this run's filter (None: it can)."""
        s = self.state
        if not s.filled or s.readable_by == self.readable_by:
            return None
        was = s.readable_by or "no filter"
        now = self.readable_by or "no filter"
        return (f"{self.url} was filled with --readable-by {was}, not {now}: run with "
                "--reindex to fill it again with this filter")

    def check_position(self) -> None:
        """``FeedGapError`` if the feed no longer holds every event after the checkpoint."""
        feed = self.repo.feed_state()
        seq = self.state.seq
        if not lost_after(feed, seq):
            return
        if seq > feed["seq"]:
            raise FeedGapError(
                f"{self.url} is at seq {seq:,} but the change feed ends at {feed['seq']:,} "
                "(was the repository restored or replaced?): run with --reindex")
        first = feed["first"] or feed["seq"] + 1
        raise FeedGapError(
            f"{self.url} is at seq {seq:,}, but the change feed now starts at seq "
            f"{first:,}: the events in between are older than the retention "
            "(messaging.retention_days) and gone. Nothing was skipped: run with "
            "--reindex to rebuild the target from the current state")

    # -- catching up --------------------------------------------------------------------

    def catch_up_once(self) -> int:
        """One round (see the module doc); returns how many events it applied
        (0: the target is caught up)."""
        self.check_position()
        pending = list(islice(self.repo.changes(self.state.seq, batch=self.batch), self.batch))
        if not pending:
            if self.state.last_error:        # reachable again, and caught up
                self.state.last_error = ""
                self.save()
            return 0
        uids = list(dict.fromkeys(c.uid for c in pending))
        # Another process may have committed these events a moment ago: on disk
        # before a copy of them leaves.
        self.repo.make_durable()
        self.target.apply(self.source.writes(uids))
        self.state.seq = pending[-1].seq
        self.state.applied_at = st.now_iso()
        self.state.last_error = ""
        self.save()
        return len(pending)

    def catch_up(self, progress: Callable[[int], None] | None = None) -> int:
        """Rounds until the target is caught up; returns the events applied."""
        done = 0
        while n := self.catch_up_once():
            done += n
            if progress is not None:
                progress(n)
        return done

    # -- reindex ------------------------------------------------------------------------

    def reindex(self, progress: Callable[[int], None] | None = None,
                stop: threading.Event | None = None) -> ReindexReport:
        """Rebuild the target from the current state (see the module doc); ``stop``
        set ends it between two batches, the target left unfilled."""
        start = self.repo.feed_state()["seq"]
        s = self.state
        s.filled, s.seq, s.readable_by = False, start, self.readable_by
        self.save()
        report = ReindexReport()
        uids = live_uids(self.repo)
        kept: set[str] = set()
        sending: deque[Sending] = deque()
        try:
            while chunk := list(islice(uids, REINDEX_BATCH)):
                if stop is not None and stop.is_set():
                    return report
                writes = self.source.writes(chunk)
                # The next step is read while the last ones are on their way.
                while len(sending) >= REINDEX_IN_FLIGHT:
                    sending.popleft().wait()
                sending.append(self.target.send(writes))
                kept.update(w.iri for w in writes if w.data is not None)
                report.written += len(chunk)
                if progress is not None:
                    progress(len(chunk))
            while sending:
                sending.popleft().wait()
        finally:
            _drain(sending)
        if self.query_url:
            prefix = str(self.repo.base_uri) + "/"
            stale = [g for g in named_graphs(self.target, self.query_url, prefix)
                     if g not in kept]
            for i in range(0, len(stale), REINDEX_BATCH):
                self.target.apply([GraphWrite(g, None) for g in stale[i:i + REINDEX_BATCH]])
            report.stale_deleted, report.stale_checked = len(stale), True
        s.filled, s.applied_at, s.last_error = True, st.now_iso(), ""
        self.save()
        report.complete = True
        log.info("Reindexed %s: %d graphs written, from seq %d", self.url, report.written,
                 start)
        return report
