"""Republishing retained events (``lsup-admin events replay``), e.g. to rebuild an
index: every event of the change feed after a seq or from a time, in commit
order, sent again with its original ``id`` (consumers that de-duplicate by id
see them as redeliveries). The feed keeps events ``messaging.retention_days``.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lakesuperior.config import Config
from lakesuperior.exceptions import BrokerError
from lakesuperior.messaging.broker import BrokerConnection
from lakesuperior.repository import Repository

BATCH = 500


def parse_since(text: str) -> int | datetime:
    """``--since``: a seq (digits) or an ISO 8601 time (UTC unless it has an offset)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is neither a seq nor an ISO 8601 time "
                         f"(e.g. 2024-05-01T12:00:00Z)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def replay(repo: Repository, config: Config, since: int | datetime,
           progress: Callable[[int], None] | None = None) -> int:
    """Send the retained events after seq ``since`` (or at or after a time) again;
    return how many. ``BrokerError`` if the broker stops acknowledging."""
    conn = BrokerConnection(config)
    sent = 0
    batch: list[Any] = []
    try:
        for change in repo.changes(since):
            batch.append(change)
            if len(batch) >= BATCH:
                sent += _send_all(conn, batch)
                batch = []
                if progress is not None:
                    progress(sent)
        sent += _send_all(conn, batch)
    finally:
        conn.close()
    return sent


def _send_all(conn: BrokerConnection, batch: list[Any]) -> int:
    done = 0
    while done < len(batch):
        acked = conn.send(batch[done:])
        if acked <= 0:
            raise BrokerError("The broker stopped acknowledging events")
        done += acked
    return done
