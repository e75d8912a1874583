"""Checking client triples before they are written: the one owner of input rules.

``InputChecker`` applies, to the triples of one resource: the handling of
server-managed triples (``server_managed.is_server_managed`` decides which),
the single-subject rule, the shape of subjects and predicates, and referential
integrity (links to repository resources that do not exist: dropped under
``lenient``, refused under ``strict``; the only place the rule is applied).
"""
from __future__ import annotations

from collections.abc import Iterable

from lakesuperior.exceptions import (
    InvalidResourceError,
    InvalidTripleError,
    RefIntViolationError,
    ServerManagedTermError,
    SingleSubjectError,
)
from lakesuperior.model.context import Context
from lakesuperior.model.interaction import MODEL_TYPES
from lakesuperior.model.membership import triples_about
from lakesuperior.model.namespaces import FCREPO_HAS_PARENT, FCREPO_REPOSITORY_ROOT, RDF_TYPE
from lakesuperior.model.server_managed import MAYBE_MANAGED, TIMESTAMPS, is_server_managed
from lakesuperior.model.uids import RES_PREFIX, ROOT_UID, graph, parent_uid, res_uri, uid_of
from lakesuperior.rdfio import Triple

#: How server-managed triples in input are handled: ``strict`` refuses them,
#: ``lenient`` drops them, ``tolerant`` drops those that change nothing (see
#: ``InputChecker``) and refuses the others.
HANDLINGS = ("strict", "lenient", "tolerant")

#: Most missing link targets a ``RefIntViolationError`` names.
MAX_SHOWN = 50


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
                 "model", "dropped", "may_repeat", "_refs", "_membership")

    def __init__(self, ctx: Context, uid: str, handling: str = "strict",
                 model: str | None = None, has_membership: bool | None = None):
        if handling not in HANDLINGS:
            raise InvalidResourceError(uid, f"handling must be one of {', '.join(HANDLINGS)}, "
                                            f"not {handling!r}")
        self.ctx = ctx
        self.model = model
        #: whether other containers give the resource membership triples (None: look)
        self._membership = has_membership
        self.uid = uid
        self.res = res_uri(uid)
        self.pub_res = ctx.urimap.public_term(uid)
        self.pub_hash = self.pub_res[:-1] + "#"
        self.res_hash = self.res[:-1] + "#"
        self.handling = handling
        #: The triples (public URIs) lenient referential integrity dropped.
        self.dropped: list[Triple] = []
        #: Whether ``check`` may have made two distinct input triples equal: the
        #: input named a resource in its internal form too (or the root without
        #: its slash), which internalizing merges with the public form.
        self.may_repeat = False
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
        server_managed = is_server_managed
        maybe_managed = MAYBE_MANAGED
        # Predicate -> whether it is server-managed, for the predicates that may be
        # (but rdf:type, whose answer depends on the object): a graph repeats few.
        managed: dict[str, bool] = {}
        sm: list[Triple] = []
        foreign: list[Triple] = []
        out: list[Triple] = []
        append = out.append
        refs: list[int] = []   # positions in out of triples linking to repository resources
        root = RES_PREFIX + "/>"   # what both <base> and <base/> become
        merged = False
        for s, p, o in triples:
            if s == pub_res:
                s = res
            elif s[:1] == "<":
                if s.startswith(pub_hash):
                    s = res_stem + s[cut:]
                else:
                    t = to_internal(s)
                    merged = merged or t is s or t == root
                    s = t
                    if s != res and not s.startswith(res_hash) and not allow_foreign:
                        foreign.append((s, p, o))
                        continue
            elif s[:2] != "_:":
                raise InvalidTripleError(self.uid, f"Invalid subject (not an IRI or blank "
                                                   f"node): {s[:200]}")
            if p.startswith(maybe_managed):
                found = managed.get(p)
                if found is None:
                    if p == RDF_TYPE:
                        found = server_managed(p, o)
                    else:
                        found = managed[p] = server_managed(p, o)
                if found:
                    sm.append((s, p, o))
                    continue
            elif p[:1] != "<":
                raise InvalidTripleError(self.uid, f"Invalid predicate (not an IRI): {p[:200]}")
            if o.startswith(ours):
                t = to_internal(o)
                merged = merged or t is o or t == root
                o = t
                if check_refs and o.startswith(RES_PREFIX):
                    refs.append(len(out))
            append((s, p, o))
        self.may_repeat = merged
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
        allowed_types = set(MODEL_TYPES[self.model]) if self.model is not None else set()
        if self.uid == ROOT_UID:
            allowed_types.add(FCREPO_REPOSITORY_ROOT)
        parent = parent_uid(self.uid)
        parent_term = res_uri(parent) if parent is not None else None
        refused: list[Triple] = []
        for s, p, o in sm:
            if s == res:
                if p in TIMESTAMPS:
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
        if not out or not (self._membership if self._membership is not None
                           else txn.has_graph(graph("midx", self.uid))):
            return out
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
        """``out`` without the links (at positions ``refs``) to repository resources
        that do not exist; ``RefIntViolationError`` instead under ``strict``."""
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
        to_public = self.ctx.urimap.to_public
        if self.ctx.settings.referential_integrity == "strict":
            targets = sorted({to_public(out[i][2]) for i in missing})
            shown = ", ".join(targets[:MAX_SHOWN])
            more = len(targets) - MAX_SHOWN
            raise RefIntViolationError(
                self.uid, f"Links to repository resources that do not exist (strict "
                          f"referential integrity): {shown}"
                          + (f" and {more} more" if more > 0 else ""))
        drop = set(missing)
        self.dropped.extend((to_public(s), p, to_public(o))
                            for s, p, o in (out[i] for i in missing))
        return [t for i, t in enumerate(out) if i not in drop]
