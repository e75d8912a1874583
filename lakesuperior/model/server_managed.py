"""Server-managed triples: which triples only the server writes, and writing them.

The one owner of the rule (``is_server_managed``): input checks, updates, views
and the migration tool all ask here. The server writes a resource's rdf:types
(its interaction model's, see ``interaction.MODEL_TYPES``), its fcrepo
timestamps and agents, ``fcrepo:hasParent``, a binary's digest, size and
mimetype, and containment (``ldp:contains``).
"""
from __future__ import annotations

from collections.abc import Iterable

from lakesuperior.model import versions
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.events import record_change
from lakesuperior.model.external import EXTERNAL_HANDLING, EXTERNAL_URL
from lakesuperior.model.interaction import MODEL_TYPES
from lakesuperior.model.namespaces import (
    EBUCORE_HAS_MIME_TYPE,
    FCREPO,
    FCREPO_CREATED,
    FCREPO_CREATED_BY,
    FCREPO_HAS_PARENT,
    FCREPO_LAST_MODIFIED,
    FCREPO_LAST_MODIFIED_BY,
    FCREPO_REPOSITORY_ROOT,
    FCSYSTEM,
    LDP,
    LDP_CONTAINS,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    RDF_TYPE,
)
from lakesuperior.model.uids import ROOT_UID, parent_uid, res_uri
from lakesuperior.rdfio import Triple

#: Server-managed predicates that describe a binary's content (for external
#: content its URL and handling, ``model.external``).
BINARY_PREDICATES = frozenset((PREMIS_HAS_MESSAGE_DIGEST, PREMIS_HAS_SIZE,
                               EBUCORE_HAS_MIME_TYPE, EXTERNAL_URL, EXTERNAL_HANDLING))

#: Predicates only the server may write (besides every fcrepo: and fcsystem: predicate).
SERVER_MANAGED_PREDICATES = frozenset((LDP_CONTAINS, *BINARY_PREDICATES))

#: fcrepo timestamps and agents of a resource.
TIMESTAMPS = frozenset((FCREPO_CREATED, FCREPO_CREATED_BY, FCREPO_LAST_MODIFIED,
                        FCREPO_LAST_MODIFIED_BY))

_SERVER_NAMESPACES = (FCREPO.prefix, FCSYSTEM.prefix)
_SERVER_CLASSES = (LDP.prefix, FCREPO.prefix, FCSYSTEM.prefix)

#: A predicate that starts with none of these is not server-managed, whatever its
#: object (a cheap first test for input checks: most predicates are the client's).
MAYBE_MANAGED = (*_SERVER_NAMESPACES, *sorted(SERVER_MANAGED_PREDICATES), RDF_TYPE)


def is_server_managed(p: str, o: str) -> bool:
    """Whether a triple with predicate ``p`` and object ``o`` is server-managed:
    ``ldp:contains``, binary digest/size/mimetype, any ``fcrepo:`` or
    ``fcsystem:`` predicate, and rdf:type with an LDP or Fedora class."""
    if p == RDF_TYPE:
        return o.startswith(_SERVER_CLASSES)
    return p in SERVER_MANAGED_PREDICATES or p.startswith(_SERVER_NAMESPACES)


def server_triples(ctx: Context, uid: str, model: str, *,
                   created: str | None = None, created_by: str | None = None) -> list[Triple]:
    """The server-managed triples of a resource (types, timestamps, parent)."""
    res = res_uri(uid)
    now = ctx.now_term
    agent = ctx.agent_term
    out = [(res, RDF_TYPE, t) for t in MODEL_TYPES[model]]
    if uid == ROOT_UID:
        out.append((res, RDF_TYPE, FCREPO_REPOSITORY_ROOT))
    out.append((res, FCREPO_CREATED, created or now))
    out.append((res, FCREPO_CREATED_BY, created_by or agent))
    out.append((res, FCREPO_LAST_MODIFIED, now))
    out.append((res, FCREPO_LAST_MODIFIED_BY, agent))
    parent = parent_uid(uid)
    if parent is not None:
        out.append((res, FCREPO_HAS_PARENT, res_uri(parent)))
    return out


def renewed_server_triples(ctx: Context, uid: str, model: str, old: list[Triple], *,
                           created: str | None = None,
                           created_by: str | None = None) -> list[Triple]:
    """Fresh server-managed triples of a changed resource, keeping the creation
    date and agent of its ``old`` triples (unless given, as terms)."""
    res = res_uri(uid)
    return server_triples(ctx, uid, model,
                          created=created or first_value(old, res, FCREPO_CREATED),
                          created_by=created_by or first_value(old, res, FCREPO_CREATED_BY))


def binary_values(triples: Iterable[Triple], uid: str) -> list[Triple]:
    """The server-managed binary triples (digest, size, mimetype, external URL and
    handling) of a description."""
    res = res_uri(uid)
    return [t for t in triples if t[1] in BINARY_PREDICATES and t[0] == res]


def first_value(triples: Iterable[Triple], subject: str, predicate: str) -> str | None:
    """The object of the first ``(subject, predicate, ?)`` triple, or None."""
    for s, p, o in triples:
        if p == predicate and s == subject:
            return o
    return None


def touch(ctx: WriteContext, uid: str) -> None:
    """Set a live resource's ``fcrepo:lastModified`` to now (a live version of it
    keeps the state it names: ``versions.settle``); if it is now already, its
    state does not change and nothing is written."""
    res = res_uri(uid)
    if ctx.txn.objects(res, FCREPO_LAST_MODIFIED, res) != [ctx.now_term]:
        versions.settle(ctx, uid)
        ctx.txn.set_value(res, FCREPO_LAST_MODIFIED, ctx.now_term, res)
    record_change(ctx, uid, "update")
