"""The conditional headers of a request (RFC 7232, RFC 7233 ``If-Range``),
evaluated against a resource's current state. Pure: no Flask, no I/O.

One comparison rule everywhere: ``If-Match`` compares weakly exactly when the
current tag is weak (RDF sources, whose only validators are weak: LDP 4.2.1.3,
4.2.4.5) and strongly for a binary's content.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from lakesuperior.endpoints.paths import Target
from lakesuperior.endpoints.representation import etag_of, is_weak, modified_of, state_token
from lakesuperior.http import headers as hdr


class HeaderMap(Protocol):
    """Request headers: a name -> value mapping (case-insensitive in practice)."""

    def get(self, key: str, /) -> str | None: ...


@dataclass(frozen=True)
class Conditions:
    """The conditional headers of a request (None: absent)."""

    if_match: str | None = None
    if_none_match: str | None = None
    if_modified_since: str | None = None
    if_unmodified_since: str | None = None
    if_state_token: str | None = None     #: Fedora's ``X-If-State-Token`` (PUT, PATCH)

    @classmethod
    def of(cls, headers: HeaderMap) -> Conditions:
        """The conditions among a request's headers."""
        return cls(headers.get("If-Match"), headers.get("If-None-Match"),
                   headers.get("If-Modified-Since"), headers.get("If-Unmodified-Since"),
                   headers.get("X-If-State-Token"))

    def __bool__(self) -> bool:
        """Whether the request has any conditional header."""
        return any(v is not None for v in (self.if_match, self.if_none_match,
                                           self.if_modified_since, self.if_unmodified_since,
                                           self.if_state_token))

    def evaluate(self, method: str, *, etag: str | None,
                 last_modified: datetime | None) -> int | None:
        """None (proceed), 304 or 412 for a representation with this ``etag`` and
        ``last_modified`` (``etag`` None: there is no current representation)."""
        return hdr.evaluate_preconditions(
            method, exists=etag is not None, etag=etag, last_modified=last_modified,
            if_match=self.if_match, if_none_match=self.if_none_match,
            if_modified_since=self.if_modified_since,
            if_unmodified_since=self.if_unmodified_since,
            weak_if_match=etag is not None and is_weak(etag))

    def evaluate_state(self, method: str, current: Any, target: Target) -> int | None:
        """``evaluate`` against the current state of a write's target: a resource
        or its ``Repository.info`` (its default representation), None if missing."""
        if current is None:
            return self.evaluate(method, etag=None, last_modified=None)
        outcome = self.evaluate(method, etag=etag_of(current, target),
                                last_modified=modified_of(current))
        if (outcome is None and method in ("PUT", "PATCH") and self.if_state_token is not None
                and self.if_state_token.strip() != state_token(current)):
            return 412     # the resource changed since the client read its state token
        return outcome


def if_range_holds(if_range: str | None, etag: str, last_modified: str | None) -> bool:
    """RFC 7233 section 3.2: a ``Range`` applies only if ``If-Range`` (absent: it
    does) names exactly the current strong ``etag`` or ``Last-Modified`` value."""
    if not if_range:
        return True
    value = if_range.strip()
    if value.startswith('"') or value.startswith("W/"):
        return value == etag and not is_weak(value)
    date = hdr.parse_http_date(value)
    return date is not None and hdr.format_http_date(date) == last_modified
