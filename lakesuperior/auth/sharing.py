"""Sharing: an ACL read as grants, and grants added or revoked, as pure functions
over its triples (public canonical term strings, as ``Repository.acl`` gives them).

A grant is one mode given to one grantee on one resource, for the resource
alone or for it and what is below it (``acl:default``). The grantees: a user
(``acl:agent``, a WebID), a group (``acl:agentGroup``), everyone
(``acl:agentClass foaf:Agent``) or signed-in users (``acl:agentClass
acl:AuthenticatedAgent``). ``grant`` adds one authorization node per grant;
``revoke`` takes a mode away from a grantee in every node that gives it,
leaving the other grantees and modes of the node as they were. ``adopt`` turns
the rules a resource inherits into rules of its own ACL (an ACL of its own
replaces what it inherited, so the first change copies them first).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from lakesuperior.model.namespaces import ACL, FOAF, RDF_TYPE
from lakesuperior.rdfio import Triple

__all__ = ["Grantee", "Grant", "EVERYONE", "SIGNED_IN", "grants", "grant", "revoke",
           "adopt", "MODES"]

#: The modes offered, in the order they are shown.
MODES = ("Read", "Write", "Append", "Control")
_MODE_TERMS = {m: getattr(ACL, m) for m in MODES}
_TERM_MODES = {t: m for m, t in _MODE_TERMS.items()}
#: predicate of the grantee -> kind
_KINDS = {ACL.agent: "user", ACL.agentGroup: "group", ACL.agentClass: "class"}
_PREDICATES = {"user": ACL.agent, "group": ACL.agentGroup, "class": ACL.agentClass}


@dataclass(frozen=True, order=True)
class Grantee:
    """Who a grant is for: ``kind`` ``user``, ``group`` or ``class``; ``term``: the
    WebID, the group or the agent class (a canonical IRI term)."""

    kind: str
    term: str


EVERYONE = Grantee("class", FOAF.Agent)
SIGNED_IN = Grantee("class", ACL.AuthenticatedAgent)


@dataclass(frozen=True)
class Grant:
    """One mode for one grantee; ``below``: inherited by what is below (``acl:default``)."""

    grantee: Grantee
    mode: str
    below: bool


def _nodes(triples: Iterable[Triple]) -> dict[str, dict[str, list[str]]]:
    nodes: dict[str, dict[str, list[str]]] = {}
    for s, p, o in triples:
        nodes.setdefault(s, {}).setdefault(p, []).append(o)
    return nodes


def _is_authorization(props: dict[str, list[str]]) -> bool:
    return ACL.Authorization in props.get(RDF_TYPE, ())


def _grantees(props: dict[str, list[str]]) -> list[Grantee]:
    return [Grantee(kind, o) for p, kind in _KINDS.items() for o in props.get(p, ())]


def grants(triples: Iterable[Triple], resource: str, *,
           inherited: bool = False) -> list[Grant]:
    """The grants an ACL gives on ``resource`` (a canonical IRI term): with
    ``inherited``, those of an ancestor's ACL that reach it (``acl:default``
    rules). Rules naming classes of resources (``acl:accessToClass``) are left
    out: they are shown only as the ACL's own triples."""
    found: dict[Grant, None] = {}
    for props in _nodes(triples).values():
        if not _is_authorization(props) or props.get(ACL.accessToClass):
            continue
        below = bool(props.get(ACL.default))
        if inherited and not below:
            continue
        if not inherited and resource not in props.get(ACL.accessTo, ()) and not below:
            continue
        for who in _grantees(props):
            for m in props.get(ACL.mode, ()):
                if m in _TERM_MODES:
                    found[Grant(who, _TERM_MODES[m], below or inherited)] = None
    return list(found)


def _node_name(acl: str, g: Grant) -> str:
    key = f"{g.grantee.kind} {g.grantee.term} {g.mode} {g.below}".encode()
    return f"<{acl}#grant-{hashlib.sha256(key).hexdigest()[:16]}>"


def _rule(acl: str, resource: str, g: Grant) -> list[Triple]:
    node = _node_name(acl, g)
    out = [(node, RDF_TYPE, ACL.Authorization), (node, ACL.accessTo, resource),
           (node, ACL.mode, _MODE_TERMS[g.mode]),
           (node, _PREDICATES[g.grantee.kind], g.grantee.term)]
    if g.below:
        out.append((node, ACL.default, resource))
    return out


def grant(triples: Iterable[Triple], acl: str, resource: str, g: Grant) -> list[Triple]:
    """The ACL ``triples`` of ``resource`` (``acl``: the bare IRI of its ACL document)
    with ``g`` added; the same triples if it gives that already."""
    current = list(triples)
    if g in grants(current, resource):
        return current
    return current + [t for t in _rule(acl, resource, g) if t not in current]


def revoke(triples: Iterable[Triple], acl: str, resource: str, grantee: Grantee,
           mode: str) -> list[Triple]:
    """The ACL ``triples`` without ``mode`` for ``grantee``: each node giving it
    loses the grantee, which keeps its other modes of that node in a node of its
    own."""
    current = list(triples)
    nodes = _nodes(current)
    term = _MODE_TERMS[mode]
    out: list[Triple] = []
    kept: list[Grant] = []
    for s, p, o in current:
        props = nodes[s]
        if not (_is_authorization(props) and term in props.get(ACL.mode, ())
                and grantee in _grantees(props) and not props.get(ACL.accessToClass)):
            out.append((s, p, o))
            continue
        if p == _PREDICATES[grantee.kind] and o == grantee.term:
            below = bool(props.get(ACL.default))
            kept.extend(Grant(grantee, _TERM_MODES[m], below) for m in props[ACL.mode]
                        if m in _TERM_MODES and m != term)
            continue
        out.append((s, p, o))
    # a node left without any grantee grants nothing: drop it
    emptied = {s for s, props in _nodes(out).items()
               if _is_authorization(props) and not _grantees(props) and _grantees(nodes[s])}
    out = [t for t in out if t[0] not in emptied]
    for g in kept:
        out = grant(out, acl, resource, g)
    return out


def adopt(inherited: Iterable[Triple], acl: str, resource: str) -> list[Triple]:
    """An ACL of its own for ``resource`` giving what it inherits (``inherited``:
    the triples of the ancestor's ACL that decides for it) here and below."""
    out: list[Triple] = []
    for g in grants(inherited, resource, inherited=True):
        out = grant(out, acl, resource, g)
    return out
