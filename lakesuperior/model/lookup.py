"""What is at a uid now: a live resource of some interaction model, a tombstone,
or nothing. Bound lookups only: never reads a container's children."""
from __future__ import annotations

from collections.abc import Iterable

from lakesuperior.exceptions import ResourceNotExistsError, TombstoneError
from lakesuperior.model.interaction import model_of
from lakesuperior.model.namespaces import FCSYSTEM_BURIED_IN, FCSYSTEM_DELETED, RDF_TYPE
from lakesuperior.model.uids import graph, res_uri, uid_of
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader


def types_of(txn: Reader, uid: str) -> list[str]:
    """rdf:type objects of a live resource (empty if there is none): one bound
    lookup that does not read the container's children."""
    res = res_uri(uid)
    return [q[2] for q in txn.match(res, RDF_TYPE, None, res)]


def model_in(triples: Iterable[Triple], uid: str) -> str | None:
    """The interaction model named by the rdf:type triples of ``uid`` among its
    triples (read earlier), or None."""
    res = res_uri(uid)
    return model_of(o for s, p, o in triples if p == RDF_TYPE and s == res)


def model_at(txn: Reader, uid: str) -> str | None:
    """The interaction model of the live resource at ``uid``, or None."""
    return model_of(types_of(txn, uid))


def is_tombstone(txn: Reader, uid: str) -> bool:
    """Whether ``uid`` was deleted and left a tombstone (its own or an ancestor's)."""
    return txn.has_graph(graph("tomb", uid))


def tombstone_error(txn: Reader, uid: str) -> TombstoneError:
    """The error for a buried uid, naming the tombstone's top and time."""
    tomb = graph("tomb", uid)
    res = res_uri(uid)
    top = uid
    when = None
    for s, p, o in txn.triples(tomb):
        if p == FCSYSTEM_BURIED_IN:
            top = uid_of(o)
        elif p == FCSYSTEM_DELETED and s == res:
            when = o
    if top != uid:
        for q in txn.match(res_uri(top), FCSYSTEM_DELETED, None, graph("tomb", top)):
            when = q[2]
        msg = f"Resource {uid} was deleted with {top} (tombstone at {top})"
    else:
        msg = f"Resource {uid} was deleted (tombstone)"
    return TombstoneError(uid, ts=when, msg=msg, top=top)


def require_model(txn: Reader, uid: str) -> str:
    """The interaction model of a live resource; ``ResourceNotExistsError`` or
    ``TombstoneError`` if there is none."""
    model = model_at(txn, uid)
    if model is None:
        if is_tombstone(txn, uid):
            raise tombstone_error(txn, uid)
        raise ResourceNotExistsError(uid)
    return model
