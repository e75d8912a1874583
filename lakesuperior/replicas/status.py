"""Where each target stands: what ``lsup-admin sync status`` and ``/admin/stats`` show."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lakesuperior.messaging.status import lost_after
from lakesuperior.replicas import state as st

__all__ = ["replica_status"]


def replica_status(repo: Any) -> list[dict[str, Any]]:
    """One entry per target synced from ``repo``'s data directory: its checkpoint
    (``seq``), the lag behind the feed in events (``lag_events``) and in seconds
    (``lag_seconds``: the age of the oldest event not yet applied; 0 when caught
    up), ``gap`` (the feed no longer holds the events after the checkpoint), the
    last error and when it happened, and whether a process is syncing it now."""
    feed = repo.feed_state()
    now = datetime.now(UTC)
    out = []
    for s in st.all_states(repo.config.data_dir):
        behind = max(feed["seq"] - s.seq, 0)
        gap = lost_after(feed, s.seq)
        lag_s = 0.0
        if behind:
            oldest = next(iter(repo.changes(s.seq, batch=1)), None)
            if oldest is not None:
                lag_s = max((now - oldest.timestamp).total_seconds(), 0.0)
        out.append({"target": s.target, "protocol": s.protocol, "seq": s.seq,
                    "feed_seq": feed["seq"], "lag_events": behind,
                    "lag_seconds": round(lag_s, 3), "gap": gap, "filled": s.filled,
                    "readable_by": s.readable_by or None, "applied_at": s.applied_at,
                    "last_error": s.last_error or None, "last_error_at": s.last_error_at,
                    "running": st.TargetLock(repo.config.data_dir, s.target).in_use()})
    return out
