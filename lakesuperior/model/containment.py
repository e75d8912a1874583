"""Containment: the ``ldp:contains`` triples of a container, one per child.

They live in the container's own graph and are added one by one with
``txn.add`` (an O(log n) append), so that adding a child never rewrites the
container and listing children is a range scan. Adding or removing a child
touches the container's ``fcrepo:lastModified``.
"""
from __future__ import annotations

from typing import Any

from lakesuperior.model.context import Context
from lakesuperior.model.namespaces import LDP_CONTAINS
from lakesuperior.model.server_managed import touch
from lakesuperior.model.uids import RES_PREFIX, graph, res_uri, uid_of
from lakesuperior.rdfio import Triple

_CUT = len(RES_PREFIX)


def add_child(ctx: Context, parent: str, uid: str) -> None:
    """Add the containment triple to the parent (an O(log n) append) and touch
    the parent's ``fcrepo:lastModified``."""
    pres = res_uri(parent)
    ctx.txn.add(((pres, LDP_CONTAINS, res_uri(uid), pres),))
    touch(ctx, parent)


def remove_child(ctx: Context, parent: str, uid: str) -> None:
    """Remove the containment triple from the parent and touch the parent."""
    pres = res_uri(parent)
    ctx.txn.remove(pres, LDP_CONTAINS, res_uri(uid), pres)
    touch(ctx, parent)


def children_of(txn: Any, uid: str) -> list[str]:
    """Child uids of a live container (a range scan of its containment triples)."""
    res = res_uri(uid)
    return [q[2][_CUT:-1] for q in txn.match(res, LDP_CONTAINS, None, res)]


def children_in(triples: list[Triple]) -> list[str]:
    """Child uids named by the containment triples among a container's triples."""
    return [o[_CUT:-1] for _s, p, o in triples if p == LDP_CONTAINS]


def write_graph(ctx: Context, uid: str, triples: list[Triple],
                children: list[str] | None = None, *, canonical: bool = False) -> None:
    """Set a resource's graph: its own triples in one record, then the
    containment triples (if any) appended one by one so that adding a child
    later stays an append. ``canonical``: every term is known to be canonical
    (the store skips re-validating them)."""
    res = res_uri(uid)
    txn = ctx.txn
    txn.add_graph(res, triples, canonical=canonical)
    if children:
        txn.add([(res, LDP_CONTAINS, res_uri(c), res) for c in children])


def subtree(txn: Any, uid: str, kind: str = "res") -> list[str]:
    """``uid`` and its descendants, parents before children (containment walk in
    the live graphs, or in the buried ones for ``kind='bury'``)."""
    out = [uid]
    i = 0
    while i < len(out):
        u = out[i]
        out.extend(uid_of(q[2]) for q in txn.match(res_uri(u), LDP_CONTAINS, None,
                                                   graph(kind, u)))
        i += 1
    return out
