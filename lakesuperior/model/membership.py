"""Membership of Direct and Indirect containers: their configuration (checked
and completed with its defaults by ``complete_config``) and the membership
triples it makes, kept materialized.

A Direct or Indirect container ``C`` with membership resource ``X``, relation
``P`` and inserted-content relation ``Q`` gives, for each child ``D``:

* ``hasMemberRelation P``: ``(X, P, m)``; ``isMemberOfRelation P``: ``(m, P, X)``;
* ``m`` is ``D`` for ``ldp:MemberSubject``, else each object of ``(D, Q, m)`` in D.

Those triples are written, when the child is added, to the graph
``<info:fcmbr{C}>`` (one per container: an O(log n) append per child), and a
pointer ``(S, fcsystem:membershipFrom, C)`` to the graph ``<info:fcmidx{uid}>``
of the resource whose subject ``S`` they describe. Reading a resource's
membership is then one small graph read plus one bound lookup per pointer,
without scanning anything. They are removed when the child is deleted, and
the container's whole set is rebuilt when its configuration changes (rare,
O(children)). Every change sets ``fcrepo:lastModified`` of the live resources
whose membership triples changed (``touch_subjects``): their representation,
ETag and Last-Modified follow.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lakesuperior.exceptions import InvalidTripleError
from lakesuperior.model.containment import children_of
from lakesuperior.model.context import WriteContext
from lakesuperior.model.interaction import (
    DIRECT_CONTAINER,
    INDIRECT_CONTAINER,
    MEMBERSHIP_CONTAINERS,
    model_name,
)
from lakesuperior.model.lookup import model_at
from lakesuperior.model.namespaces import (
    FCSYSTEM_MEMBERSHIP_FROM,
    LDP_CONTAINS,
    LDP_HAS_MEMBER_RELATION,
    LDP_INSERTED_CONTENT_RELATION,
    LDP_IS_MEMBER_OF_RELATION,
    LDP_MEMBER,
    LDP_MEMBER_SUBJECT,
    LDP_MEMBERSHIP_RESOURCE,
)
from lakesuperior.model.server_managed import touch
from lakesuperior.model.uids import (
    RES_PREFIX,
    graph,
    graph_kind,
    parent_uid,
    res_uri,
    uid_of,
)
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

#: The predicates of a container's membership configuration.
CONFIG_PREDICATES = (LDP_MEMBERSHIP_RESOURCE, LDP_HAS_MEMBER_RELATION,
                     LDP_IS_MEMBER_OF_RELATION, LDP_INSERTED_CONTENT_RELATION)


@dataclass(frozen=True)
class MembershipConfig:
    """How a container makes membership triples (terms are internal)."""

    container: str          # uid of the container
    resource: str           # ldp:membershipResource
    relation: str           # ldp:hasMemberRelation or ldp:isMemberOfRelation
    inverse: bool           # True for ldp:isMemberOfRelation
    icr: str                # ldp:insertedContentRelation (ldp:MemberSubject for direct)

    def triples_for(self, member: str, member_triples: Iterable[Triple] = ()) -> list[Triple]:
        """Membership triples a child contributes (``member_triples``: its own
        triples, needed for an inserted-content relation other than MemberSubject)."""
        if self.icr == LDP_MEMBER_SUBJECT:
            values = [member]
        else:
            icr = self.icr
            values = [o for s, p, o in member_triples if p == icr and s == member
                      and o[:1] != '"']
        if self.inverse:
            return [(v, self.relation, self.resource) for v in values]
        return [(self.resource, self.relation, v) for v in values]


def config_from_triples(uid: str, model: str | None,
                        triples: Iterable[Triple]) -> MembershipConfig | None:
    """The membership configuration of a container from its own triples."""
    if model not in MEMBERSHIP_CONTAINERS:
        return None
    res = res_uri(uid)
    resource = res
    relation = LDP_MEMBER
    inverse = False
    icr = LDP_MEMBER_SUBJECT
    for s, p, o in triples:
        if s != res:
            continue
        if p == LDP_MEMBERSHIP_RESOURCE:
            resource = o
        elif p == LDP_HAS_MEMBER_RELATION:
            relation, inverse = o, False
        elif p == LDP_IS_MEMBER_OF_RELATION:
            relation, inverse = o, True
        elif p == LDP_INSERTED_CONTENT_RELATION and model == INDIRECT_CONTAINER:
            icr = o
    return MembershipConfig(uid, resource, relation, inverse, icr)


def read_config(txn: Reader, uid: str, model: str | None = None) -> MembershipConfig | None:
    """The membership configuration of a live container, by bound lookups only."""
    if model is None:
        model = model_at(txn, uid)
    if model not in MEMBERSHIP_CONTAINERS:
        return None
    res = res_uri(uid)
    own: list[Triple] = []
    for p in CONFIG_PREDICATES:
        own.extend(q[:3] for q in txn.match(res, p, None, res))
    return config_from_triples(uid, model, own)


def complete_config(uid: str, model: str, user: list[Triple]) -> list[Triple]:
    """Check a Direct/Indirect container's membership triples and add defaults.

    Exactly one ``ldp:membershipResource`` (default: the container itself), one
    of ``ldp:hasMemberRelation`` / ``ldp:isMemberOfRelation`` (default
    ``ldp:hasMemberRelation ldp:member``) and, for an Indirect container, at
    most one ``ldp:insertedContentRelation`` (default ``ldp:MemberSubject``); a
    Direct container's must be ``ldp:MemberSubject``. Values must be IRIs, and
    the membership predicate cannot be ``ldp:contains`` (Fedora API 3.1.1).
    """
    if model not in MEMBERSHIP_CONTAINERS:
        return user
    res = res_uri(uid)
    found: dict[str, list[str]] = {p: [] for p in CONFIG_PREDICATES}
    for s, p, o in user:
        if s == res and p in found:
            found[p].append(o)
    for p, values in found.items():
        if len(values) > 1:
            raise InvalidTripleError(uid, f"A {model_name(model)} has at most one {p}; "
                                          f"got {len(values)}")
        if values and values[0][:1] != "<":
            raise InvalidTripleError(uid, f"The object of {p} must be an IRI, not "
                                          f"{values[0][:100]}")
    for p in (LDP_HAS_MEMBER_RELATION, LDP_IS_MEMBER_OF_RELATION):
        if found[p] and found[p][0] == LDP_CONTAINS:
            raise InvalidTripleError(uid, f"{LDP_CONTAINS} cannot be the membership "
                                          f"predicate of a container ({p[1:-1]}): "
                                          "containment and membership stay apart")
    if found[LDP_HAS_MEMBER_RELATION] and found[LDP_IS_MEMBER_OF_RELATION]:
        raise InvalidTripleError(uid, "A container has ldp:hasMemberRelation or "
                                      "ldp:isMemberOfRelation, not both")
    icr = found[LDP_INSERTED_CONTENT_RELATION]
    if model == DIRECT_CONTAINER and icr and icr[0] != LDP_MEMBER_SUBJECT:
        raise InvalidTripleError(uid, "A Direct container's ldp:insertedContentRelation "
                                      "can only be ldp:MemberSubject")
    extra = []
    if not found[LDP_MEMBERSHIP_RESOURCE]:
        extra.append((res, LDP_MEMBERSHIP_RESOURCE, res))
    if not found[LDP_HAS_MEMBER_RELATION] and not found[LDP_IS_MEMBER_OF_RELATION]:
        extra.append((res, LDP_HAS_MEMBER_RELATION, LDP_MEMBER))
    if model == INDIRECT_CONTAINER and not icr:
        extra.append((res, LDP_INSERTED_CONTENT_RELATION, LDP_MEMBER_SUBJECT))
    return user + extra if extra else user


# --- writing ------------------------------------------------------------------------

def _subject_uid(term: str) -> str | None:
    return uid_of(term) if term.startswith(RES_PREFIX) else None


def touch_subjects(ctx: WriteContext, subjects: Iterable[str]) -> None:
    """Set ``fcrepo:lastModified`` of the live resources whose membership triples
    changed (their representation, so their ETag and Last-Modified, changed)."""
    txn = ctx.txn
    for suid in {u for u in map(_subject_uid, subjects) if u is not None}:
        if txn.has_graph(res_uri(suid)):
            touch(ctx, suid)


def add(ctx: WriteContext, cfg: MembershipConfig, triples: list[Triple]) -> None:
    """Record membership triples of container ``cfg.container``."""
    if not triples:
        return
    mg = graph("mbr", cfg.container)
    cres = res_uri(cfg.container)
    quads = [(s, p, o, mg) for s, p, o in triples]
    subjects = {t[0] for t in triples}
    for s in subjects:
        suid = _subject_uid(s)
        if suid is not None:
            quads.append((s, FCSYSTEM_MEMBERSHIP_FROM, cres, graph("midx", suid)))
    ctx.txn.add(quads)
    touch_subjects(ctx, subjects)


def remove(ctx: WriteContext, cfg: MembershipConfig, triples: list[Triple], member: str) -> None:
    """Remove the membership triples that child ``member`` (a uid) contributed.

    With an inserted-content relation two children may contribute the same
    triple: it stays while another child of the container still gives it.
    """
    if not triples:
        return
    txn = ctx.txn
    mg = graph("mbr", cfg.container)
    shared = cfg.icr != LDP_MEMBER_SUBJECT
    changed = set()
    for s, p, o in triples:
        if shared and _still_contributed(txn, cfg, s if cfg.inverse else o, member):
            continue
        txn.remove(s, p, o, mg)
        changed.add(s)
    touch_subjects(ctx, changed)
    cres = res_uri(cfg.container)
    if cfg.inverse:
        for s in {t[0] for t in triples}:
            suid = _subject_uid(s)
            if suid is not None and not any(True for _ in txn.match(s, None, None, mg)):
                txn.remove(s, FCSYSTEM_MEMBERSHIP_FROM, cres, graph("midx", suid))


def _still_contributed(txn: Reader, cfg: MembershipConfig, value: str, member: str) -> bool:
    """Whether a child of the container other than ``member`` has (child, icr, value)."""
    for s, _, _, g in txn.match(None, cfg.icr, value, None):
        if graph_kind(g) != "res" or s != g:
            continue
        other = uid_of(g)
        if other != member and parent_uid(other) == cfg.container:
            return True
    return False


def on_child_added(ctx: WriteContext, cfg: MembershipConfig | None, child: str,
                   child_triples: Iterable[Triple]) -> None:
    if cfg is not None:
        add(ctx, cfg, cfg.triples_for(res_uri(child), child_triples))


def on_child_removed(ctx: WriteContext, cfg: MembershipConfig | None, child: str,
                     child_triples: Iterable[Triple]) -> None:
    if cfg is not None:
        remove(ctx, cfg, cfg.triples_for(res_uri(child), child_triples), child)


def on_child_changed(ctx: WriteContext, cfg: MembershipConfig | None, child: str,
                     old_triples: Iterable[Triple], new_triples: Iterable[Triple]) -> None:
    """A member's own triples changed: its contribution follows (indirect only)."""
    if cfg is None or cfg.icr == LDP_MEMBER_SUBJECT:
        return
    member = res_uri(child)
    old = set(cfg.triples_for(member, old_triples))
    new = set(cfg.triples_for(member, new_triples))
    if old != new:
        remove(ctx, cfg, sorted(old - new), child)
        add(ctx, cfg, sorted(new - old))


def drop(ctx: WriteContext, container: str) -> None:
    """Remove all membership triples of a container (and the pointers to them)."""
    txn = ctx.txn
    mg = graph("mbr", container)
    cres = res_uri(container)
    subjects = {q[0] for q in txn.match(None, None, None, mg)}
    for s in subjects:
        suid = _subject_uid(s)
        if suid is not None:
            txn.remove(s, FCSYSTEM_MEMBERSHIP_FROM, cres, graph("midx", suid))
    txn.remove_graph(mg)
    touch_subjects(ctx, subjects)


def rebuild(ctx: WriteContext, container: str, cfg: MembershipConfig | None) -> None:
    """Recompute all membership triples of a container from its children."""
    drop(ctx, container)
    if cfg is None:
        return
    txn = ctx.txn
    out: list[Triple] = []
    for child in children_of(txn, container):
        member = res_uri(child)
        if cfg.icr == LDP_MEMBER_SUBJECT:
            out.extend(cfg.triples_for(member))
        else:
            own = [q[:3] for q in txn.match(member, cfg.icr, None, member)]
            out.extend(cfg.triples_for(member, own))
    add(ctx, cfg, out)


# --- reading --------------------------------------------------------------------------

def triples_about(txn: Reader, uid: str,
                  containers: Callable[[str], bool] | None = None) -> list[Triple]:
    """Membership triples whose subject is ``uid`` or one of its hash URIs (only those
    of the containers, internal URIs, that ``containers`` accepts, if given)."""
    pointers = txn.triples(graph("midx", uid))
    if not pointers:
        return []
    out: list[Triple] = []
    seen: set[Triple] = set()
    for s, _, c in pointers:
        if containers is not None and not containers(c):
            continue
        for q in txn.match(s, None, None, graph("mbr", uid_of(c))):
            t = q[:3]
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def has_membership(txn: Reader, uid: str) -> bool:
    """Whether containers give ``uid`` (or its hash URIs) membership triples."""
    return txn.has_graph(graph("midx", uid))
