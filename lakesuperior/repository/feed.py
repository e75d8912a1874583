"""The change feed methods of ``Repository`` (bound in its class body): reading the
feed's events and figures, and recording what the broker acknowledged."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from lakesuperior.exceptions import InvalidResourceError
from lakesuperior.model import events
from lakesuperior.model.context import WriteContext
from lakesuperior.repository.core import Repository

__all__ = ["changes", "feed_state", "mark_published"]


def changes(repo: Repository, since: int | datetime = 0, *, batch: int = 1000
            ) -> Iterator[events.Change]:
    """The change feed: one ``events.Change`` per changed resource per committed
    write, in commit order, from the events retained (``messaging.retention_days``)
    after seq ``since`` (an int) or at or after a time (a ``datetime``). Each
    batch is read from its own snapshot; iteration ends at the feed's end."""
    if isinstance(since, datetime):
        with repo.store.read() as txn:
            after = events.first_after(txn, since)
    elif isinstance(since, int) and not isinstance(since, bool) and since >= 0:
        after = since
    else:
        raise InvalidResourceError(None, f"since is a seq (int >= 0) or a datetime, "
                                         f"not {since!r:.50}")
    while True:
        with repo.store.read() as txn:
            found = events.changes_after(txn, after, batch)
        if not found:
            return
        yield from found
        after = found[-1].seq

def feed_state(repo: Repository) -> dict[str, int]:
    """The change feed's figures: ``first`` / ``last`` seq retained, ``entries``,
    ``seq`` (last handed out), ``published`` (last acknowledged by the broker)."""
    with repo.store.read() as txn:
        return txn.outbox_state()

def mark_published(repo: Repository, seq: int) -> None:
    """Record that the broker acknowledged every event up to ``seq``."""

    def mark(ctx: WriteContext) -> None:
        if seq > ctx.txn.outbox_state()["published"]:
            ctx.txn.outbox_mark(seq)
    repo._write(mark)
