"""LDP semantics: interaction models, server-managed triples, input checks, containment.

Everything here works on canonical term strings (no rdflib objects) and on the
``Context`` of one call. A resource's graph (``<info:fcres{uid}>``) holds its
user triples, its server-managed triples, and (for a container) one
``ldp:contains`` triple per child, added one by one with ``txn.add``.
"""
from __future__ import annotations

from collections.abc import Iterable

from lakesuperior.exceptions import (
    InvalidResourceError,
    InvalidTripleError,
    RefIntViolationError,
    ResourceNotExistsError,
    ServerManagedTermError,
    SingleSubjectError,
    TombstoneError,
)
from lakesuperior.model.context import Context
from lakesuperior.model.interaction import (
    DIRECT_CONTAINER,
    INDIRECT_CONTAINER,
    MEMBERSHIP_CONTAINERS,
    MODEL_TYPES,
    model_name,
    model_of,
)
from lakesuperior.model.namespaces import (
    EBUCORE_HAS_MIME_TYPE,
    FCREPO_CREATED,
    FCREPO_CREATED_BY,
    FCREPO_HAS_PARENT,
    FCREPO_LAST_MODIFIED,
    FCREPO_LAST_MODIFIED_BY,
    FCREPO_NS,
    FCREPO_REPOSITORY_ROOT,
    FCSYSTEM_BURIED_IN,
    FCSYSTEM_DELETED,
    FCSYSTEM_NS,
    LDP_CONTAINS,
    LDP_HAS_MEMBER_RELATION,
    LDP_INSERTED_CONTENT_RELATION,
    LDP_IS_MEMBER_OF_RELATION,
    LDP_MEMBER,
    LDP_MEMBER_SUBJECT,
    LDP_MEMBERSHIP_RESOURCE,
    LDP_NS,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    RDF_TYPE,
)
from lakesuperior.model.uids import (
    RES_PREFIX,
    ROOT_UID,
    graph,
    parent_uid,
    res_uri,
    uid_of,
)

Triple = tuple[str, str, str]

# --- server-managed triples -------------------------------------------------------------

LDP_PREFIX = "<" + LDP_NS
FCREPO_PREFIX = "<" + FCREPO_NS
FCSYSTEM_PREFIX = "<" + FCSYSTEM_NS

#: Predicates only the server may write (besides every fcrepo: predicate).
SERVER_MANAGED_PREDICATES = frozenset((
    LDP_CONTAINS,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    EBUCORE_HAS_MIME_TYPE,
))

#: Server-managed predicates that describe a binary's content.
BINARY_PREDICATES = frozenset((PREMIS_HAS_MESSAGE_DIGEST, PREMIS_HAS_SIZE,
                               EBUCORE_HAS_MIME_TYPE))


def is_server_managed(p: str, o: str) -> bool:
    """Whether a triple with predicate ``p`` and object ``o`` is server-managed:
    ``ldp:contains``, binary digest/size/mimetype, any ``fcrepo:`` or
    ``fcsystem:`` predicate, and rdf:type with an LDP or Fedora class."""
    if p == RDF_TYPE:
        return o.startswith(LDP_PREFIX) or o.startswith(FCREPO_PREFIX) or o.startswith(
            FCSYSTEM_PREFIX)
    return (p in SERVER_MANAGED_PREDICATES or p.startswith(FCREPO_PREFIX)
            or p.startswith(FCSYSTEM_PREFIX))


def split_server_managed(triples: Iterable[Triple]) -> tuple[list[Triple], list[Triple]]:
    """``(user, server_managed)`` triples of a stored graph; containment counts as
    server-managed."""
    user, sm = [], []
    for t in triples:
        (sm if is_server_managed(t[1], t[2]) else user).append(t)
    return user, sm


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


def first_value(triples: Iterable[Triple], subject: str, predicate: str) -> str | None:
    for s, p, o in triples:
        if p == predicate and s == subject:
            return o
    return None


# --- reading a resource's state -----------------------------------------------------------

def types_of(txn, uid: str) -> list[str]:
    """rdf:type objects of a live resource (empty if there is none): one bound
    lookup that does not read the container's children."""
    res = res_uri(uid)
    return [q[2] for q in txn.match(res, RDF_TYPE, None, res)]


def is_tombstone(txn, uid: str) -> bool:
    return txn.has_graph(graph("tomb", uid))


def tombstone_error(txn, uid: str) -> TombstoneError:
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


def require_model(txn, uid: str) -> str:
    """The interaction model of a live resource; ``ResourceNotExistsError`` or
    ``TombstoneError`` if there is none."""
    model = model_of(types_of(txn, uid))
    if model is None:
        if is_tombstone(txn, uid):
            raise tombstone_error(txn, uid)
        raise ResourceNotExistsError(uid)
    return model


# --- checking input --------------------------------------------------------------------------

#: How server-managed triples in input are handled: ``strict`` refuses them,
#: ``lenient`` drops them, ``tolerant`` drops those that change nothing (see
#: ``InputChecker``) and refuses the others.
HANDLINGS = ("strict", "lenient", "tolerant")

_TIMESTAMPS = frozenset((FCREPO_CREATED, FCREPO_CREATED_BY, FCREPO_LAST_MODIFIED,
                         FCREPO_LAST_MODIFIED_BY))


class InputChecker:
    """Validates and internalizes user triples for one resource.

    Input triples use public URIs (relative ones already resolved against the
    resource's public URI). Output triples use internal URIs. Checks:
    server-managed triples (``strict`` refuses, ``lenient`` drops; ``tolerant``,
    for a GET-modify-PUT round trip, drops those identical to the stored ones,
    the rdf:types of the interaction ``model``, the right ``fcrepo:hasParent``
    and the resource's fcrepo timestamps and agents, and also the membership
    triples other containers give the resource, and refuses any other), the single
    subject rule (the resource, its hash URIs and blank nodes; others refused
    unless ``allow_foreign_subjects``), literal subjects and non-IRI
    predicates, and referential integrity of links to repository resources.
    """

    __slots__ = ("ctx", "uid", "res", "pub_res", "pub_hash", "res_hash", "handling",
                 "model", "_refs")

    def __init__(self, ctx: Context, uid: str, handling: str = "strict",
                 model: str | None = None):
        if handling not in HANDLINGS:
            raise InvalidResourceError(uid, f"handling must be one of {', '.join(HANDLINGS)}, "
                                            f"not {handling!r}")
        self.ctx = ctx
        self.model = model
        self.uid = uid
        self.res = res_uri(uid)
        self.pub_res = ctx.urimap.public_term(uid)
        self.pub_hash = self.pub_res[:-1] + "#"
        self.res_hash = self.res[:-1] + "#"
        self.handling = handling
        self._refs: dict[str, bool] = {}

    def check(self, triples: Iterable[Triple], *, refint: bool = True) -> list[Triple]:
        """The accepted triples, internalized; raises on refused input."""
        ctx = self.ctx
        to_internal = ctx.urimap.to_internal
        ours = (ctx.urimap.pub_prefix, RES_PREFIX)   # objects that may name our resources
        res, pub_res, pub_hash, res_hash = self.res, self.pub_res, self.pub_hash, self.res_hash
        res_stem = res[:-1]
        cut = len(pub_res) - 1
        allow_foreign = ctx.settings.allow_foreign_subjects
        check_refs = (ctx.settings.referential_integrity if refint else "off") != "off"
        sm_preds = SERVER_MANAGED_PREDICATES
        sm_ns = (FCREPO_PREFIX, FCSYSTEM_PREFIX)
        sm_types = (LDP_PREFIX, FCREPO_PREFIX, FCSYSTEM_PREFIX)
        rdf_type = RDF_TYPE
        sm: list[Triple] = []
        foreign: list[Triple] = []
        out: list[Triple] = []
        append = out.append
        refs: list[int] = []   # positions in out of triples linking to repository resources
        for s, p, o in triples:
            if s == pub_res:
                s = res
            elif s[:1] == "<":
                if s.startswith(pub_hash):
                    s = res_stem + s[cut:]
                else:
                    s = to_internal(s)
                    if s != res and not s.startswith(res_hash) and not allow_foreign:
                        foreign.append((s, p, o))
                        continue
            elif s[:2] != "_:":
                raise InvalidTripleError(self.uid, f"Invalid subject (not an IRI or blank "
                                                   f"node): {s[:200]}")
            if p[:1] != "<":
                raise InvalidTripleError(self.uid, f"Invalid predicate (not an IRI): {p[:200]}")
            if p in sm_preds or p.startswith(sm_ns) or (p == rdf_type and o.startswith(sm_types)):
                sm.append((s, p, o))
                continue
            if o.startswith(ours):
                o = to_internal(o)
                if check_refs and o.startswith(RES_PREFIX):
                    refs.append(len(out))
            append((s, p, o))
        if self.handling == "tolerant":
            if sm:
                sm = self._changes(sm)
            out = self._without_membership(out, refs)
        if sm and self.handling != "lenient":
            shown = "; ".join(f"{t[1]} {t[2][:100]}" for t in sm[:5])
            raise ServerManagedTermError(
                self.uid, f"Server-managed triples cannot be set on {self.uid} "
                          f"(use lenient handling to drop them): {shown}"
                          + (f" and {len(sm) - 5} more" if len(sm) > 5 else ""))
        if foreign:
            shown = ", ".join(sorted({ctx.urimap.to_public(t[0]) for t in foreign})[:5])
            raise SingleSubjectError(
                self.uid, f"Triples about other subjects than {self.uid} (or its hash URIs) "
                          f"are not allowed: {shown}")
        if refs:
            out = self._refint(out, refs)
        return out

    def _changes(self, sm: list[Triple]) -> list[Triple]:
        """The server-managed input triples that would change something (tolerant)."""
        txn = self.ctx.txn
        to_internal = self.ctx.urimap.to_internal
        res = self.res
        allowed_types = set(MODEL_TYPES.get(self.model, ()))
        if self.uid == ROOT_UID:
            allowed_types.add(FCREPO_REPOSITORY_ROOT)
        parent = parent_uid(self.uid)
        parent_term = res_uri(parent) if parent is not None else None
        refused = []
        for s, p, o in sm:
            if s == res:
                if p in _TIMESTAMPS:
                    continue
                if p == RDF_TYPE and o in allowed_types:
                    continue
            o = to_internal(o) if o[:1] == "<" else o
            if s == res and p == FCREPO_HAS_PARENT and o == parent_term:
                continue
            if next(iter(txn.match(s, p, o, res)), None) is not None:   # stored already
                continue
            refused.append((s, p, o))
        return refused

    def _without_membership(self, out: list[Triple], refs: list[int]) -> list[Triple]:
        """``out`` without the membership triples other containers give the resource
        (they appear in its representation, not in its own triples)."""
        txn = self.ctx.txn
        if not out or not txn.has_graph(graph("midx", self.uid)):
            return out
        from lakesuperior.model.membership import triples_about
        generated = set(triples_about(txn, self.uid))
        if not generated:
            return out
        if refs:   # keep the positions of the links to check
            kept = [i for i, t in enumerate(out) if t not in generated]
            where = {old: new for new, old in enumerate(kept)}
            refs[:] = [where[i] for i in refs if i in where]
            return [out[i] for i in kept]
        return [t for t in out if t not in generated]

    def _refint(self, out: list[Triple], refs: list[int]) -> list[Triple]:
        missing: list[int] = []
        known = self._refs          # object term -> whether its resource exists
        txn = self.ctx.txn
        for i in refs:
            o = out[i][2]
            ok = known.get(o)
            if ok is None:
                target = uid_of(o)
                ok = known[o] = (target == self.uid or txn.has_graph(res_uri(target)))
            if not ok:
                missing.append(i)
        if not missing:
            return out
        if self.ctx.settings.referential_integrity == "strict":
            shown = ", ".join(sorted({self.ctx.urimap.to_public(out[i][2]) for i in missing})[:5])
            raise RefIntViolationError(
                self.uid, f"Links to repository resources that do not exist: {shown}")
        drop = set(missing)
        return [t for i, t in enumerate(out) if i not in drop]


# --- membership configuration of Direct / Indirect containers ------------------------------------

_MEMBERSHIP_PREDICATES = (LDP_MEMBERSHIP_RESOURCE, LDP_HAS_MEMBER_RELATION,
                          LDP_IS_MEMBER_OF_RELATION, LDP_INSERTED_CONTENT_RELATION)


def complete_membership_config(uid: str, model: str, user: list[Triple]) -> list[Triple]:
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
    found: dict[str, list[str]] = {p: [] for p in _MEMBERSHIP_PREDICATES}
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


# --- containment ----------------------------------------------------------------------------

def add_child(ctx: Context, parent: str, uid: str) -> None:
    """Add the containment triple to the parent (an O(log n) append) and touch
    the parent's ``fcrepo:lastModified``."""
    pres = res_uri(parent)
    txn = ctx.txn
    txn.add(((pres, LDP_CONTAINS, res_uri(uid), pres),))
    touch(ctx, parent)


def remove_child(ctx: Context, parent: str, uid: str) -> None:
    pres = res_uri(parent)
    ctx.txn.remove(pres, LDP_CONTAINS, res_uri(uid), pres)
    touch(ctx, parent)


def touch(ctx: Context, uid: str) -> None:
    """Set a live resource's ``fcrepo:lastModified`` to now."""
    res = res_uri(uid)
    txn = ctx.txn
    txn.remove(res, FCREPO_LAST_MODIFIED, None, res)
    txn.add(((res, FCREPO_LAST_MODIFIED, ctx.now_term, res),))


def children_of(txn, uid: str) -> list[str]:
    """Child uids of a live container (a range scan of its containment triples)."""
    res = res_uri(uid)
    cut = len(RES_PREFIX)
    return [q[2][cut:-1] for q in txn.match(res, LDP_CONTAINS, None, res)]


def write_graph(ctx: Context, uid: str, triples: list[Triple],
                children: list[str] | None = None) -> None:
    """Set a resource's graph: its own triples in one record, then the
    containment triples (if any) appended one by one so that adding a child
    later stays an append."""
    res = res_uri(uid)
    txn = ctx.txn
    txn.add_graph(res, triples)
    if children:
        txn.add([(res, LDP_CONTAINS, res_uri(c), res) for c in children])
