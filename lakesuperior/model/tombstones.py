"""Deletion: tombstones (soft delete), resurrection, and purge.

Soft delete of ``uid`` moves the graph of ``uid`` and of every descendant to
``<info:fcbury{u}>`` (so that union-graph queries no longer see them), and
writes a small tombstone graph ``<info:fctomb{u}>`` for each: for ``uid``
itself ``rdf:type fcsystem:Tombstone`` and ``fcsystem:deleted``, for a
descendant ``fcsystem:buriedIn <uid>``. The parent loses the containment
triple and gains ``fcsystem:hasTombstone <uid>`` in ``<info:fcgrave{parent}>``,
so that purging the parent later finds the tombstones under it. Membership
triples the buried resources gave are removed (and rebuilt on resurrection).

Purge (hard delete, or ``forget`` of a tombstone) removes the graphs of the
whole subtree, tombstones and versions included. Binary content files are
left to ``Repository.cleanup()``: content is shared by digest, and a file must
outlive the last transaction that can still refer to it.
"""
from __future__ import annotations

from lakesuperior.exceptions import (
    InvalidResourceError,
    ResourceExistsError,
    ResourceNotExistsError,
)
from lakesuperior.model import containment, membership, versions
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.events import record_change
from lakesuperior.model.interaction import MEMBERSHIP_CONTAINERS
from lakesuperior.model.lookup import model_at, model_in, require_model
from lakesuperior.model.namespaces import (
    FCSYSTEM_BURIED_IN,
    FCSYSTEM_DELETED,
    FCSYSTEM_HAS_TOMBSTONE,
    FCSYSTEM_TOMBSTONE,
    LDP_CONTAINS,
    RDF_TYPE,
)
from lakesuperior.model.uids import ROOT_UID, graph, parent_of, res_uri, uid_of
from lakesuperior.rdfio import Triple


def _detach(ctx: WriteContext, uid: str, own: list[Triple]) -> None:
    """Remove a resource's containment and membership in its parent."""
    txn = ctx.txn
    parent = parent_of(uid)
    parent_model = model_at(txn, parent)
    if parent_model in MEMBERSHIP_CONTAINERS:
        cfg = membership.read_config(txn, parent, parent_model)
        membership.on_child_removed(ctx, cfg, uid, own)
    containment.remove_child(ctx, parent, uid)


def bury(ctx: WriteContext, uid: str) -> None:
    """Soft delete: tombstone ``uid`` and bury its descendants."""
    txn = ctx.txn
    require_model(txn, uid)
    if uid == ROOT_UID:
        raise InvalidResourceError(uid, "The root cannot be deleted")
    own = txn.triples(res_uri(uid))
    _detach(ctx, uid, own)
    top = res_uri(uid)
    for u in containment.subtree(txn, uid):
        res = res_uri(u)
        triples = own if u == uid else txn.triples(res)
        txn.add_graph(graph("bury", u), triples)
        record_change(ctx, u, "delete")
        txn.remove_graph(res)
        if model_in(triples, u) in MEMBERSHIP_CONTAINERS:
            membership.drop(ctx, u)
        if u == uid:
            marker = [(res, RDF_TYPE, FCSYSTEM_TOMBSTONE), (res, FCSYSTEM_DELETED, ctx.now_term)]
        else:
            marker = [(res, FCSYSTEM_BURIED_IN, top)]
        txn.add_graph(graph("tomb", u), marker)
    parent = parent_of(uid)
    txn.add(((res_uri(parent), FCSYSTEM_HAS_TOMBSTONE, top, graph("grave", parent)),))


def _top_tombstone(ctx: Context, uid: str) -> None:
    """Check that ``uid`` is the top of a tombstone."""
    txn = ctx.txn
    if txn.has_graph(res_uri(uid)):
        raise ResourceExistsError(uid, f"Resource {uid} is not deleted")
    marker = txn.triples(graph("tomb", uid))
    if not marker:
        raise ResourceNotExistsError(uid, f"There is no tombstone at {uid}")
    for _s, p, o in marker:
        if p == FCSYSTEM_BURIED_IN:
            top = uid_of(o)
            raise InvalidResourceError(uid, f"Resource {uid} was deleted with {top}: "
                                            f"use {top} instead")


def resurrect(ctx: WriteContext, uid: str) -> None:
    """Undo a soft delete: restore ``uid`` and its descendants."""
    txn = ctx.txn
    _top_tombstone(ctx, uid)
    parent = parent_of(uid)
    parent_model = require_model(txn, parent)
    nodes = containment.subtree(txn, uid, "bury")
    own: list[Triple] = []
    for u in nodes:
        triples = txn.triples(graph("bury", u))
        mine = [t for t in triples if t[1] != LDP_CONTAINS]
        containment.write_graph(ctx, u, mine, containment.children_in(triples))
        record_change(ctx, u, "resurrect")
        txn.remove_graph(graph("bury", u))
        txn.remove_graph(graph("tomb", u))
        if u == uid:
            own = mine
    for u in nodes:
        model = model_at(txn, u)
        if model in MEMBERSHIP_CONTAINERS:
            membership.rebuild(ctx, u, membership.read_config(txn, u, model))
    containment.add_child(ctx, parent, uid)
    if parent_model in MEMBERSHIP_CONTAINERS:
        membership.on_child_added(ctx, membership.read_config(txn, parent, parent_model),
                                  uid, own)
    txn.remove(res_uri(parent), FCSYSTEM_HAS_TOMBSTONE, res_uri(uid), graph("grave", parent))


def purge(ctx: WriteContext, uid: str) -> None:
    """Hard delete a live resource and everything under it."""
    txn = ctx.txn
    require_model(txn, uid)
    if uid == ROOT_UID:
        raise InvalidResourceError(uid, "The root cannot be deleted")
    _detach(ctx, uid, txn.triples(res_uri(uid)))
    _purge_tree(ctx, uid, "res")


def forget(ctx: WriteContext, uid: str) -> None:
    """Purge a tombstone and everything buried under it, versions included."""
    _top_tombstone(ctx, uid)
    _purge_tree(ctx, uid, "bury")
    parent = parent_of(uid)
    ctx.txn.remove(res_uri(parent), FCSYSTEM_HAS_TOMBSTONE, res_uri(uid), graph("grave", parent))


def _purge_tree(ctx: WriteContext, uid: str, kind: str) -> None:
    txn = ctx.txn
    for u in containment.subtree(txn, uid, kind):
        g = graph(kind, u)
        if kind == "res" and model_at(txn, u) in MEMBERSHIP_CONTAINERS:
            membership.drop(ctx, u)
        record_change(ctx, u, "purge")
        txn.remove_graph(g)
        txn.remove_graph(graph("tomb", u))
        versions.purge(ctx, u)
        grave = graph("grave", u)
        for _s, p, o in txn.triples(grave):
            if p == FCSYSTEM_HAS_TOMBSTONE:
                _purge_tree(ctx, uid_of(o), "bury")
        txn.remove_graph(grave)
