"""Access control lists in the store: one graph per ACL, a registry, a generation.

Graph names (see ``uids``)::

    <info:fcacl{uid}>           the ACL of ``uid``: its triples, internal URIs
    <info:fcwac/registry>       <info:fcres{uid}> fcsystem:hasAcl <info:fcacl{uid}>
                                for every uid that has an ACL
    <info:fcwac/generation>     one triple whose literal changes on every ACL write

The generation is a fresh random token at each write (never a counter, so a
rolled-back write cannot be mistaken for a later committed one): a reader that
finds the token it saw before knows that no ACL changed, and keeps what it
derived from them (``auth.access.AclState``). An ACL is not a resource graph:
it never appears as a child, in containment, in SPARQL or as an inbound link.
Soft deletes leave a resource's ACL in place (the tombstone follows it and a
resurrected resource gets it back); purges remove the ACLs of the whole tree.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

from lakesuperior.auth import authorizations as auth
from lakesuperior.exceptions import (
    ConfigError,
    LakesuperiorError,
    ResourceNotExistsError,
)
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.literals import literal_term
from lakesuperior.model.lookup import require_model
from lakesuperior.model.namespaces import FCSYSTEM
from lakesuperior.model.sparql_update import evaluate as evaluate_update
from lakesuperior.model.sparql_update import parse as parse_update
from lakesuperior.model.uids import ROOT_UID, graph, is_descendant, res_uri, uid_of
from lakesuperior.rdfio import TURTLE, Triple, graph_to_triples, parse, triples_to_graph
from lakesuperior.store.reads import Reader

__all__ = ["REGISTRY", "GENERATION", "acl_graph", "generation", "registry", "has_acl",
           "stored", "write", "remove", "purge_tree", "update", "to_internal", "load_root",
           "current"]

REGISTRY = graph("wac", "/registry")
GENERATION = graph("wac", "/generation")
HAS_ACL = FCSYSTEM.hasAcl
_GENERATION_OF = FCSYSTEM.aclGeneration


def acl_graph(uid: str) -> str:
    return graph("acl", uid)


def generation(txn: Reader) -> str:
    """The current ACL generation token ('' before the first ACL write): one record."""
    for _s, _p, o in txn.triples(GENERATION):
        return o
    return ""


def registry(txn: Reader) -> frozenset[str]:
    """The uids that have an ACL."""
    return frozenset(uid_of(s) for s, _p, _o in txn.triples(REGISTRY))


def has_acl(txn: Reader, uid: str) -> bool:
    return bool(txn.count(res_uri(uid), HAS_ACL, None, REGISTRY))


def stored(txn: Reader, uid: str) -> list[Triple]:
    """The stored (internal) triples of the ACL of ``uid`` (empty if it has none)."""
    return list(txn.triples(acl_graph(uid)))


def _bump(ctx: WriteContext) -> None:
    ctx.txn.add_graph(GENERATION, [(GENERATION, _GENERATION_OF,
                                    literal_term(uuid.uuid4().hex))])


def load_root(ctx: Context, path: str) -> list[Triple]:
    """The root ACL used while none is stored, checked, in its stored form: the
    Turtle file ``path`` (relative to ``<base>/fcr:acl``), else (``''``) the
    built-in ``DEFAULT_ROOT_ACL``. ``ConfigError`` if it is unreadable or refused."""
    try:
        data = Path(path).read_bytes() if path else auth.DEFAULT_ROOT_ACL.encode()
        triples = to_internal(ctx, parse(data, TURTLE, ctx.urimap.base + "/fcr:acl"))
        auth.check(triples, ROOT_UID, ctx.urimap.to_public)
    except OSError as e:
        raise ConfigError(f"Cannot read the root ACL (auth_root_acl) {path}: "
                          f"{e.strerror}") from e
    except LakesuperiorError as e:
        raise ConfigError(f"The root ACL (auth_root_acl) {path} is not usable: {e}") from e
    return triples


def current(ctx: Context, uid: str, default_root: list[Triple]) -> list[Triple]:
    """The stored triples of the ACL of the live resource ``uid``; for the root
    without one, ``default_root``; else ``ResourceNotExistsError``."""
    txn = ctx.txn
    require_model(txn, uid)
    if has_acl(txn, uid):
        return stored(txn, uid)
    if uid == ROOT_UID:
        return default_root
    raise ResourceNotExistsError(uid, f"Resource {uid} has no ACL")


def to_internal(ctx: Context, triples: Iterable[Triple]) -> list[Triple]:
    """Public triples (under ``ctx.urimap``) in their stored form."""
    inner = ctx.urimap.to_internal
    return [(inner(s), p, inner(o)) for s, p, o in triples]


def write(ctx: WriteContext, uid: str, triples: Iterable[Triple]) -> bool:
    """Create or replace the ACL of the live resource ``uid`` from public triples;
    True if it is new. ``AclError`` for what ``authorizations.check`` refuses."""
    txn = ctx.txn
    require_model(txn, uid)
    internal = list(dict.fromkeys(to_internal(ctx, triples)))
    auth.check(internal, uid, ctx.urimap.to_public)
    created = not has_acl(txn, uid)
    g = acl_graph(uid)
    txn.remove_graph(g)
    if internal:
        txn.add_graph(g, internal)
    if created:
        txn.add([(res_uri(uid), HAS_ACL, g, REGISTRY)])
    _bump(ctx)
    return created


def remove(ctx: WriteContext, uid: str) -> None:
    """Delete the ACL of ``uid``; ``ResourceNotExistsError`` if it has none."""
    txn = ctx.txn
    require_model(txn, uid)
    if not has_acl(txn, uid):
        raise ResourceNotExistsError(uid, f"Resource {uid} has no ACL")
    _drop(ctx, uid)


def _drop(ctx: WriteContext, uid: str) -> None:
    txn = ctx.txn
    txn.remove_graph(acl_graph(uid))
    txn.remove(res_uri(uid), HAS_ACL, None, REGISTRY)
    _bump(ctx)


def purge_tree(ctx: WriteContext, uid: str) -> None:
    """Remove the ACLs of ``uid`` and of everything under it (a purge)."""
    for u in registry(ctx.txn):
        if u == uid or is_descendant(u, uid):
            _drop(ctx, u)


def update(ctx: WriteContext, uid: str, text: str | bytes, current: list[Triple],
           timeout: float | None = None) -> bool:
    """Apply a SPARQL Update to the ACL of ``uid`` whose stored triples are
    ``current`` (``<>`` is the ACL document); the result is checked like a new
    ACL. Returns what ``write`` returns. ``timeout``: the seconds its parse, and
    its ``WHERE``, may each take (``query_timeout``)."""
    base = ctx.urimap.public_iri(uid).rstrip("/") + "/fcr:acl"
    request = parse_update(text, base, timeout)
    g = triples_to_graph(ctx.urimap.triples_to_public(current))
    evaluate_update(g, request, timeout)
    return write(ctx, uid, graph_to_triples(g))
