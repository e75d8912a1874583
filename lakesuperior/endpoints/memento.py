"""Memento (RFC 7089) logic as pure functions: version ids, datetime negotiation, TimeMaps.

A version id is its Memento datetime ``yyyyMMddHHmmss`` in UTC.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from lakesuperior.headers import format_http_date, format_link

MEMENTO_NS = "http://mementoweb.org/ns#"
MEMENTO = MEMENTO_NS + "Memento"
TIMEMAP = MEMENTO_NS + "TimeMap"
TIMEGATE = MEMENTO_NS + "TimeGate"
ORIGINAL_RESOURCE = MEMENTO_NS + "OriginalResource"
LINK_FORMAT = "application/link-format"


def version_datetime(version_id: str) -> datetime:
    """The aware UTC datetime of a version id (``ValueError`` if malformed)."""
    return datetime.strptime(version_id, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def choose_memento(version_ids: Sequence[str], when: datetime) -> str | None:
    """The version best matching an ``Accept-Datetime`` (RFC 7089 section 4.1.1):
    the latest one at or before ``when``, else the first one; None if there is none.
    ``version_ids`` are sorted oldest first."""
    if not version_ids:
        return None
    wanted = when.astimezone(UTC).strftime("%Y%m%d%H%M%S")
    best = version_ids[0]
    for vid in version_ids:
        if vid <= wanted:
            best = vid
        else:
            break
    return best


def timemap_link_format(original: str, timemap: str, mementos: Iterable[tuple[str, str]]) -> str:
    """A TimeMap in ``application/link-format`` (RFC 7089 section 5.1, RFC 6690).

    ``mementos``: (URI-M, version id) oldest first. The first and last mementos
    carry the ``first`` and ``last`` relation types as well.
    """
    items = list(mementos)
    links = [format_link(original, "original timegate"),
             format_link(timemap, "self", type=LINK_FORMAT,
                         **({"from": format_http_date(version_datetime(items[0][1])),
                             "until": format_http_date(version_datetime(items[-1][1]))}
                            if items else {}))]
    last = len(items) - 1
    for i, (uri, vid) in enumerate(items):
        rel = ["memento"]
        if i == 0:
            rel.insert(0, "first")
        if i == last:
            rel.insert(0, "last")
        links.append(format_link(uri, " ".join(rel),
                                 datetime=format_http_date(version_datetime(vid))))
    return ",\n".join(links) + "\n"
