"""Memento (RFC 7089) logic as pure functions: version ids, datetime negotiation, TimeMaps.

A version id is its Memento datetime ``yyyyMMddHHmmss`` in UTC.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from lakesuperior.http.headers import format_http_date, format_link
from lakesuperior.model.context import literal_term
from lakesuperior.model.namespaces import (
    LDP_CONTAINER,
    LDP_CONTAINS,
    LDP_RDF_SOURCE,
    LDP_RESOURCE,
    MEMENTO,
    RDF_TYPE,
    RDFS_LABEL,
    XSD,
)

LINK_FORMAT = "application/link-format"
#: The rdf:type terms of a TimeMap.
TIMEMAP_TYPES = (LDP_RESOURCE, LDP_RDF_SOURCE, LDP_CONTAINER, MEMENTO.TimeMap)


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

    ``mementos``: (URI-M, version id) oldest first, each as ``rel="memento"``
    with its ``datetime`` (Fedora 6's form).
    """
    items = list(mementos)
    links = [format_link(original, "original timegate"),
             format_link(timemap, "self", type=LINK_FORMAT,
                         **({"from": format_http_date(version_datetime(items[0][1])),
                             "until": format_http_date(version_datetime(items[-1][1]))}
                            if items else {}))]
    for uri, vid in items:
        links.append(format_link(uri, "memento",
                                 datetime=format_http_date(version_datetime(vid))))
    return ",\n".join(links) + "\n"


def timemap_triples(timemap: str, mementos: Iterable[tuple[str, str, str | None]]
                    ) -> list[tuple[str, str, str]]:
    """A TimeMap as RDF: an LDP container of its mementos, each with its
    ``memento:mementoDatetime`` and its label. ``mementos``: (URI-M, version id,
    label or None)."""
    tm = f"<{timemap}>"
    triples = [(tm, RDF_TYPE, t) for t in TIMEMAP_TYPES]
    for uri, vid, label in mementos:
        m = f"<{uri}>"
        when = version_datetime(vid).strftime("%Y-%m-%dT%H:%M:%SZ")
        triples.append((tm, LDP_CONTAINS, m))
        triples.append((m, MEMENTO.mementoDatetime, f'"{when}"^^{XSD.dateTime}'))
        if label:
            triples.append((m, RDFS_LABEL, literal_term(label)))
    return triples
