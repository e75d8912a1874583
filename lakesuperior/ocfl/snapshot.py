"""One resource's state as the export reads it from a snapshot: its interaction
model, the client's triples, the server-managed values Fedora's headers carry
(dates, agents, a binary's media type, file name, size, digests, external
content) and, for a tombstone, when it was deleted."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lakesuperior.model import interaction
from lakesuperior.model.external import EXTERNAL_HANDLING, EXTERNAL_URL
from lakesuperior.model.literals import lexical
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    FCREPO_CREATED,
    FCREPO_CREATED_BY,
    FCREPO_LAST_MODIFIED,
    FCREPO_LAST_MODIFIED_BY,
    FCSYSTEM_BURIED_IN,
    FCSYSTEM_DELETED,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    RDF_TYPE,
)
from lakesuperior.model.nonrdf import parse_digest_urn
from lakesuperior.model.server_managed import MAYBE_MANAGED, is_server_managed
from lakesuperior.model.uids import graph, res_uri, uid_of
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

__all__ = ["ResourceState", "deleted_at", "parse_xsd_datetime"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The server-managed values of a binary that its exported files carry.
_CONTENT_VALUES = frozenset((EBUCORE_HAS_MIME_TYPE, EBUCORE_FILENAME, EXTERNAL_URL,
                             EXTERNAL_HANDLING, PREMIS_HAS_SIZE))


def parse_xsd_datetime(text: str | None) -> datetime | None:
    """An ``xsd:dateTime`` lexical form as an aware datetime (UTC if it has no zone)."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def deleted_at(txn: Reader, uid: str) -> datetime | None:
    """When the tombstone at ``uid`` (or the one it is buried under) was made; None
    for a resource that is not deleted."""
    for _s, p, o in txn.triples(graph("tomb", uid)):
        if p == FCSYSTEM_DELETED:
            return parse_xsd_datetime(lexical(o)) or _EPOCH
        if p == FCSYSTEM_BURIED_IN:
            return deleted_at(txn, uid_of(o))
    return None


@dataclass
class ResourceState:
    """What the export writes of one resource at one time."""

    uid: str
    model: str | None
    user: list[Triple]
    created: datetime | None
    created_by: str | None
    modified: datetime | None
    modified_by: str | None
    deleted: datetime | None
    mimetype: str | None = None
    filename: str | None = None
    size: int | None = None
    digests: dict[str, str] = field(default_factory=dict)
    external_url: str | None = None
    external_handling: str | None = None
    #: The binary's values the export writes (``p o`` of ``_CONTENT_VALUES`` and digests).
    content: tuple[str, ...] = ()
    _fingerprint: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, uid: str, triples: list[Triple], deleted: datetime | None) -> ResourceState:
        res = res_uri(uid)
        values: dict[str, str] = {}
        types: list[str] = []
        digests: dict[str, str] = {}
        user: list[Triple] = []
        for t in triples:
            s, p, o = t
            if not p.startswith(MAYBE_MANAGED):    # a client's predicate (most of them)
                if p == EBUCORE_FILENAME and s == res:
                    values.setdefault(p, o)
                user.append(t)
                continue
            if s == res and p == RDF_TYPE:
                types.append(o)
            if p == EBUCORE_FILENAME and s == res:
                values.setdefault(p, o)
            if not is_server_managed(p, o):
                user.append(t)
            elif s == res:
                if p == PREMIS_HAS_MESSAGE_DIGEST:
                    algo, value = parse_digest_urn(o)
                    if algo:
                        digests[algo] = value.lower()
                else:
                    values.setdefault(p, o)

        def text(p: str) -> str | None:
            return lexical(values.get(p))
        size = text(PREMIS_HAS_SIZE)
        content = tuple([f"{p} {o}" for p, o in sorted(values.items())
                         if p in _CONTENT_VALUES]
                        + [f"{a} {v}" for a, v in sorted(digests.items())])
        return cls(uid, interaction.model_of(types), user,
                   parse_xsd_datetime(text(FCREPO_CREATED)), text(FCREPO_CREATED_BY),
                   parse_xsd_datetime(text(FCREPO_LAST_MODIFIED)),
                   text(FCREPO_LAST_MODIFIED_BY), deleted,
                   mimetype=text(EBUCORE_HAS_MIME_TYPE), filename=text(EBUCORE_FILENAME),
                   size=int(size) if size and size.isdigit() else None, digests=digests,
                   external_url=text(EXTERNAL_URL), external_handling=text(EXTERNAL_HANDLING),
                   content=content)

    @property
    def fingerprint(self) -> str:
        """A digest of what the export writes of the state: the client's triples and
        the binary's values, not the timestamps (a child added changes its
        container's). Made when first asked for (most states are never compared)."""
        if self._fingerprint is None:
            kept = sorted([" ".join(t) for t in self.user] + list(self.content))
            self._fingerprint = hashlib.sha1("\n".join(kept).encode(),
                                             usedforsecurity=False).hexdigest()
        return self._fingerprint

    @property
    def changed(self) -> datetime:
        """When this state began (its deletion, else its last modification)."""
        return self.deleted or self.modified or self.created or _EPOCH

    def key(self) -> tuple[str, str, datetime | None]:
        """Equal for states the export writes alike (timestamps aside)."""
        return self.uid, self.fingerprint, self.deleted
