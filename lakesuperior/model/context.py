"""What one model operation works with: the transaction and the settings.

The repository builds one ``Context`` per API call and passes it explicitly to
every model function; nothing in the model keeps state between calls.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from lakesuperior.model.namespaces import XSD_DATETIME
from lakesuperior.model.uids import UriMap


@dataclass(frozen=True)
class Settings:
    """The configuration values the model reads."""

    base_uri: str = "http://127.0.0.1:8000/rest"
    referential_integrity: str = "lenient"   # off | lenient | strict
    allow_foreign_subjects: bool = False
    agent: str = "admin"
    digest_algorithm: str = "sha512"


def datetime_literal(when: datetime) -> str:
    """An ``xsd:dateTime`` literal term in UTC, with microseconds."""
    text = when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
    return f'"{text}Z"^^<{XSD_DATETIME}>'


_ESCAPES = MappingProxyType({**{c: f"\\u{c:04X}" for c in (*range(0x20), 0x7F, 0xFFFE, 0xFFFF)},
            0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r",
            0x22: '\\"', 0x5C: "\\\\"})
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\x7f\ufffe\uffff]')


def literal_term(text: str, datatype: str | None = None) -> str:
    """A literal term in canonical form (``datatype`` a bare IRI, or None)."""
    if _NEEDS_ESCAPE.search(text):
        text = text.translate(_ESCAPES)
    return f'"{text}"^^<{datatype}>' if datatype else f'"{text}"'


class Context:
    """One model operation: a store transaction, the settings, the binary store.

    ``now`` is fixed at creation so that every timestamp written by one call is
    the same.
    """

    __slots__ = ("txn", "settings", "urimap", "binaries", "now", "now_term",
                 "agent_term")

    def __init__(self, txn: Any, settings: Settings, binaries: Any = None,
                 urimap: UriMap | None = None, now: datetime | None = None):
        self.txn = txn
        self.settings = settings
        self.urimap = urimap or UriMap(settings.base_uri)
        self.binaries = binaries
        self.now = now or datetime.now(UTC)
        self.now_term = datetime_literal(self.now)
        self.agent_term = literal_term(settings.agent)

    def with_base(self, base_uri: str | None) -> Context:
        """The same operation seen under another public base URI."""
        if base_uri is None or base_uri.rstrip("/") == self.urimap.base:
            return self
        ctx = Context(self.txn, self.settings, self.binaries, UriMap(base_uri), self.now)
        return ctx
