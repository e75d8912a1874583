"""Versions: snapshots of a resource's graph, named by their Memento datetime.

A version of ``uid`` taken at ``20240131120000`` (UTC, one-second resolution)
is the graph ``<info:fcsnap{uid}/fcr:versions/20240131120000>`` holding the
resource's triples at that time (containment excepted: children are not
versioned). The list of versions is the small graph ``<info:fchist{uid}>``::

    <info:fcres{uid}> fcrepo:hasVersion <info:fcres{uid}/fcr:versions/{id}> .
    <info:fcres{uid}/fcr:versions/{id}> fcrepo:created "..."^^xsd:dateTime ;
                                        rdfs:label "..." .

Two snapshots in the same second share an id: the later one replaces the
earlier (a Memento names the state at that second). A binary's snapshot holds
its description, digest included; the content file stays in the binary store
(content-addressed, never rewritten), so restoring a version restores the
content too.
"""
from __future__ import annotations

from dataclasses import dataclass

from lakesuperior.exceptions import InvalidResourceError, ResourceNotExistsError
from lakesuperior.model.context import Context
from lakesuperior.model.events import record_change
from lakesuperior.model.literals import lexical, literal_term
from lakesuperior.model.namespaces import (
    FCREPO_CREATED,
    FCREPO_HAS_VERSION,
    LDP_CONTAINS,
    RDFS_LABEL,
)
from lakesuperior.model.uids import graph, res_uri, snap_graph, version_uri
from lakesuperior.rdfio import Triple


@dataclass(frozen=True)
class VersionInfo:
    """One version of a resource."""

    id: str            #: the Memento datetime, yyyyMMddHHmmss (UTC)
    uid: str           #: the resource's uid
    uri: str           #: public IRI of the version (``<resource>/fcr:versions/<id>``)
    created: str       #: xsd:dateTime literal term of the snapshot
    label: str | None  #: the label given to create_version, if any


def version_id(ctx: Context) -> str:
    """The id of a version taken now: the call's time, yyyyMMddHHmmss (UTC)."""
    return ctx.now.strftime("%Y%m%d%H%M%S")


def check_version_id(version_id: str) -> str:
    """``version_id`` if it is well formed; ``InvalidResourceError`` if not."""
    if not (isinstance(version_id, str) and len(version_id) == 14 and version_id.isdigit()):
        raise InvalidResourceError(None, f"Invalid version id {version_id!r}: expected "
                                         "yyyyMMddHHmmss")
    return version_id


def list_versions(ctx: Context, uid: str) -> list[VersionInfo]:
    """Versions of a resource, oldest first."""
    hist = ctx.txn.triples(graph("hist", uid))
    if not hist:
        return []
    res = res_uri(uid)
    created: dict[str, str] = {}
    labels: dict[str, str] = {}
    ids: list[str] = []
    for s, p, o in hist:
        if p == FCREPO_HAS_VERSION and s == res:
            ids.append(o)
        elif p == FCREPO_CREATED:
            created[s] = o
        elif p == RDFS_LABEL:
            labels[s] = lexical(o)
    out = []
    for v in ids:
        vid = v[v.rfind("/") + 1:-1]
        out.append(VersionInfo(vid, uid, ctx.urimap.to_public(v)[1:-1], created.get(v, ""),
                               labels.get(v)))
    out.sort(key=lambda i: i.id)
    return out


def snapshot(ctx: Context, uid: str, own: list[Triple], label: str | None = None) -> str:
    """Store ``own`` (the resource's current triples) as a version; return its id."""
    vid = version_id(ctx)
    txn = ctx.txn
    txn.add_graph(snap_graph(uid, vid), [t for t in own if t[1] != LDP_CONTAINS])
    record_change(ctx, uid, "version")
    hist = graph("hist", uid)
    vuri = version_uri(uid, vid)
    txn.remove(vuri, None, None, hist)
    quads = [(res_uri(uid), FCREPO_HAS_VERSION, vuri, hist),
             (vuri, FCREPO_CREATED, ctx.now_term, hist)]
    if label is not None:
        quads.append((vuri, RDFS_LABEL, literal_term(str(label)), hist))
    txn.add(quads)
    return vid


def read_snapshot(ctx: Context, uid: str, vid: str) -> list[Triple]:
    """The triples of a version; ``ResourceNotExistsError`` if there is none."""
    check_version_id(vid)
    triples = ctx.txn.triples(snap_graph(uid, vid))
    if not triples:
        raise ResourceNotExistsError(uid, f"Resource {uid} has no version {vid}")
    return triples


def purge(ctx: Context, uid: str) -> None:
    """Remove every version of a resource."""
    txn = ctx.txn
    hist = graph("hist", uid)
    for _s, p, o in txn.triples(hist):
        if p == FCREPO_HAS_VERSION:
            txn.remove_graph(snap_graph(uid, o[o.rfind("/") + 1:-1]))
    txn.remove_graph(hist)
