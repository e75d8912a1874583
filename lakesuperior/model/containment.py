"""Containment: the ``ldp:contains`` triples of a container, one per child.

They live in the container's own graph and are added one by one with
``txn.add`` (an O(log n) append, kept apart from the graph's record), so that
adding a child never rewrites the container and listing children is a range
scan. Adding or removing a child touches the container's ``fcrepo:lastModified``.

A container's *own* triples are the others: ``own_triples`` reads them without
reading its children, and ``write_graph(..., keep_children=True)`` replaces
them leaving the containment unread and unwritten, so reading, replacing or
patching a container costs what its own triples cost, however many children
it has.
"""
from __future__ import annotations

from itertools import islice

from lakesuperior.model.context import WriteContext
from lakesuperior.model.namespaces import LDP_CONTAINS
from lakesuperior.model.server_managed import touch
from lakesuperior.model.uids import RES_PREFIX, graph, res_uri, uid_of
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

_CUT = len(RES_PREFIX)


def add_child(ctx: WriteContext, parent: str, uid: str) -> None:
    """Add the containment triple to the parent (an O(log n) append) and touch
    the parent's ``fcrepo:lastModified``."""
    pres = res_uri(parent)
    ctx.txn.add(((pres, LDP_CONTAINS, res_uri(uid), pres),))
    touch(ctx, parent)


def remove_child(ctx: WriteContext, parent: str, uid: str) -> None:
    """Remove the containment triple from the parent and touch the parent."""
    pres = res_uri(parent)
    ctx.txn.remove(pres, LDP_CONTAINS, res_uri(uid), pres)
    touch(ctx, parent)


def children_of(txn: Reader, uid: str) -> list[str]:
    """Child uids of a live container (a range scan of its containment triples)."""
    return [c[_CUT:-1] for c in contained(txn, uid)]


def contained(txn: Reader, uid: str) -> list[str]:
    """Internal URIs of the children of a live container (one range read)."""
    res = res_uri(uid)
    return txn.objects(res, LDP_CONTAINS, res)


def contained_page(txn: Reader, uid: str, start: int, stop: int) -> tuple[list[str], int]:
    """Internal URIs of the children ``start``..``stop`` (in the store's order of
    its containment run) and how many children there are: the count is one
    lookup and the listing is streamed, so only the children up to ``stop`` (and
    the rest of one decoding chunk) are decoded, however many there are."""
    res = res_uri(uid)
    total = txn.count(res, LDP_CONTAINS, None, res)
    page = [q[2] for q in islice(txn.match(res, LDP_CONTAINS, None, res), start, stop)]
    return page, total


def own_triples(txn: Reader, uid: str) -> list[Triple]:
    """A resource's triples but its containment (its children are not read)."""
    return txn.triples(res_uri(uid), omit=LDP_CONTAINS)


def children_in(triples: list[Triple]) -> list[str]:
    """Child uids named by the containment triples among a container's triples."""
    return [o[_CUT:-1] for _s, p, o in triples if p == LDP_CONTAINS]


def write_graph(ctx: WriteContext, uid: str, triples: list[Triple],
                children: list[str] | None = None, *, canonical: bool = False,
                keep_children: bool = False) -> None:
    """Set a resource's graph: its own triples in one record, then the
    containment triples (if any) appended one by one so that adding a child
    later stays an append. ``keep_children``: the resource's containment stays
    as it is, unread (``triples`` replace its own triples only).
    ``canonical``: every term is known to be canonical (the store skips
    re-validating them)."""
    res = res_uri(uid)
    txn = ctx.txn
    if keep_children:
        txn.add_graph(res, triples, canonical=canonical, keep=LDP_CONTAINS)
        return
    txn.add_graph(res, triples, canonical=canonical)
    if children:
        txn.add([(res, LDP_CONTAINS, res_uri(c), res) for c in children])


def subtree(txn: Reader, uid: str, kind: str = "res") -> list[str]:
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
