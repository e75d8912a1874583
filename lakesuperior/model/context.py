"""What one model operation works with: the transaction and the settings.

The repository builds one ``Context`` per API call and passes it explicitly to
every model function; nothing in the model keeps state between calls. Its
``events`` (a ``model.events.ChangeSet``, shared by every call of one write
transaction) collects what the write changed, for the outbox.
(``literal_term`` and ``datetime_literal`` live in ``model.literals``.)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

from lakesuperior.config import Config, defaults
from lakesuperior.model.events import ChangeSet
from lakesuperior.model.literals import datetime_literal, literal_term
from lakesuperior.model.uids import UriMap
from lakesuperior.store.reads import Reader
from lakesuperior.store.writes import WriteTxn


def system_clock() -> datetime:
    """The time by the system clock (aware, UTC): a ``Repository``'s default clock."""
    return datetime.now(UTC)


def _retention_s(days: float) -> float:
    return days * 86400.0


def _configured(key: str, convert: Callable[[Any], Any] = lambda v: v) -> Any:
    """A field whose default is the configuration's (``config.defaults()``)."""
    return field(default_factory=lambda: convert(defaults()[key]))


@dataclass(frozen=True)
class Settings:
    """The configuration values the model reads (``Repository`` passes its
    configuration's; a value not given is the configuration default)."""

    base_uri: str = _configured("base_uri")
    referential_integrity: str = _configured("referential_integrity")  # off|lenient|strict
    allow_foreign_subjects: bool = _configured("allow_foreign_subjects")
    agent: str = "admin"              # the user name recorded by a write
    digest_algorithm: str = _configured("digest_algorithm")
    versioning_auto: bool = _configured("versioning_auto")  # every change makes a version
    #: how long the change feed keeps events (``messaging.retention_days``)
    event_retention_s: float = _configured("messaging_retention_days", _retention_s)
    #: a broker takes the feed (``messaging.broker_url`` set)
    publishing: bool = _configured("messaging_broker_url", bool)

    @classmethod
    def of(cls, config: Config, agent: str = "admin") -> Settings:
        """The settings of a repository's ``config``, writes recorded as ``agent``."""
        return cls(base_uri=config.base_uri, referential_integrity=config.referential_integrity,
                   allow_foreign_subjects=config.allow_foreign_subjects, agent=agent,
                   digest_algorithm=config.digest_algorithm,
                   versioning_auto=config.versioning_auto,
                   event_retention_s=_retention_s(config.messaging_retention_days),
                   publishing=bool(config.messaging_broker_url))


class Context:
    """One model operation: a store transaction (a read snapshot, or the write
    transaction seen as a reader), the settings, the binary store.

    ``now`` is fixed at creation so that every timestamp written by one call is
    the same (the repository passes its clock's time; default the system clock).
    """

    __slots__ = ("txn", "settings", "urimap", "binaries", "now", "_now_term",
                 "agent", "_agent_term", "events")

    def __init__(self, txn: Reader, settings: Settings, binaries: Any = None,
                 urimap: UriMap | None = None, now: datetime | None = None,
                 agent: str | None = None, events: ChangeSet | None = None):
        self.txn = txn
        self.settings = settings
        self.urimap = urimap or UriMap(settings.base_uri)
        self.binaries = binaries
        self.now = now or system_clock()
        self._now_term: str | None = None
        self.agent = agent or settings.agent   # the user name recorded by this call
        self._agent_term: str | None = None
        self.events = ChangeSet() if events is None else events

    @property
    def now_term(self) -> str:
        """``now`` as an xsd:dateTime literal term (made when first asked: reads
        seldom need it)."""
        if self._now_term is None:
            self._now_term = datetime_literal(self.now)
        return self._now_term

    @property
    def agent_term(self) -> str:
        """``agent`` as a literal term."""
        if self._agent_term is None:
            self._agent_term = literal_term(self.agent)
        return self._agent_term

    def with_base(self, base_uri: str | None) -> Self:
        """The same operation seen under another public base URI."""
        if base_uri is None or base_uri.rstrip("/") == self.urimap.base:
            return self
        return type(self)(self.txn, self.settings, self.binaries, UriMap(base_uri), self.now,
                          self.agent, self.events)


class WriteContext(Context):
    """A model operation inside the write transaction: the only kind of context
    that a function which writes accepts (reads take any ``Context``)."""

    __slots__ = ()
    txn: WriteTxn

    def __init__(self, txn: WriteTxn, settings: Settings, binaries: Any = None,
                 urimap: UriMap | None = None, now: datetime | None = None,
                 agent: str | None = None, events: ChangeSet | None = None):
        super().__init__(txn, settings, binaries, urimap, now, agent, events)
