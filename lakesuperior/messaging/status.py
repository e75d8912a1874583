"""What ``lsup-admin events status`` and the stats report about the change feed."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakesuperior.config import Config
from lakesuperior.messaging.broker import probe
from lakesuperior.repository import Repository


def feed_figures(repo: Repository) -> dict[str, Any]:
    """The change feed's figures: ``events`` retained, ``first_seq`` / ``last_seq``
    (0: none), ``published`` (last seq the broker acknowledged) and ``backlog``
    (events waiting for the broker; 0 with messaging off), ``messaging`` on/off."""
    st = repo.feed_state()
    on = bool(repo.config.messaging_broker_url)
    return {"messaging": "on" if on else "off", "events": st["entries"],
            "first_seq": st["first"], "last_seq": st["seq"], "published": st["published"],
            "backlog": max(st["seq"] - st["published"], 0) if on else 0}


def events_status(repo: Repository, config: Config) -> dict[str, Any]:
    """``feed_figures`` plus the time of the last published event (if retained) and
    the broker's state (``up``, ``off``, ``down: why``), probed now."""
    out = feed_figures(repo)
    out["last_published_at"] = None
    if out["published"]:
        for change in repo.changes(out["published"] - 1):
            if change.seq == out["published"]:
                out["last_published_at"] = change.timestamp.isoformat()
            break
    out["broker"] = probe(config)
    out["destination"] = config.messaging_destination if out["messaging"] == "on" else None
    return out


def lost_after(feed: Mapping[str, int], seq: int) -> bool:
    """Whether the feed (``Repository.feed_state()``) no longer holds every event
    after ``seq``: pruned (older than the retention), or ``seq`` beyond its end
    (the repository was restored or replaced)."""
    if seq > feed["seq"]:
        return True
    return seq < feed["seq"] and (feed["first"] == 0 or feed["first"] > seq + 1)
